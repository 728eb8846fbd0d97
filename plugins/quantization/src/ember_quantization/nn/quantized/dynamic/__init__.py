"""Dynamically quantized modules: ``Linear``.

PyTorch counterpart: torch/ao/nn/quantized/dynamic/__init__.py (v2.13).
"""

from ember_quantization.nn.quantized.dynamic.linear import Linear

__all__ = ["Linear"]
