"""``ember.ao.nn``: the quantized, QAT and fused modules of ember-quantization under
torch's paths.

PyTorch counterpart: torch/ao/nn/__init__.py (v2.13).
"""

from ember.ao.nn import intrinsic, qat, quantized

__all__ = ["intrinsic", "qat", "quantized"]
