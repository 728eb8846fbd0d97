"""``ember.ao.nn.quantized.dynamic``: ember_quantization.nn.quantized.dynamic (the dynamic Linear) under torch's path.

PyTorch counterpart: torch/ao/nn/quantized/dynamic/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]

