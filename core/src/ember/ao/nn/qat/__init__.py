"""``ember.ao.nn.qat``: ember_quantization.nn.qat (quantization-aware training modules) under torch's path.

PyTorch counterpart: torch/ao/nn/qat/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]

