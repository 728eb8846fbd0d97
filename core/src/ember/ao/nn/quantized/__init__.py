"""``ember.ao.nn.quantized``: ember_quantization.nn.quantized (Linear, Conv2d, ReLU,
Quantize, DeQuantize, QFunctional) under torch's path.

PyTorch counterpart: torch/ao/nn/quantized/__init__.py (v2.13).
"""

from ember.plugins.forwarding import forwarder

__getattr__, __dir__ = forwarder(__name__)  # NOTE [ Forwarding modules ]

# its own forwarding module; a plain import, as `from . import` would ask __getattr__ and load the plugin
import ember.ao.nn.quantized.dynamic  # noqa: E402,F401

