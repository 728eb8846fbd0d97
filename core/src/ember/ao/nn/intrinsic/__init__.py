"""``ember.ao.nn.intrinsic``: ember_quantization.nn.intrinsic (fused modules) under torch's path.

PyTorch counterpart: torch/ao/nn/intrinsic/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]

