"""Quantized modules: ``Linear``, ``Conv2d``, ``ReLU``, ``Quantize``, ``DeQuantize``, ``QFunctional``;
the ``dynamic`` subpackage.

PyTorch counterpart: torch/ao/nn/quantized/__init__.py (v2.13).
"""

from ember_quantization.nn.quantized import dynamic
from ember_quantization.nn.quantized.activation import DeQuantize, Quantize, ReLU
from ember_quantization.nn.quantized.conv import Conv2d
from ember_quantization.nn.quantized.functional_modules import QFunctional
from ember_quantization.nn.quantized.linear import Linear

__all__ = ["dynamic", "Linear", "Conv2d", "ReLU", "Quantize", "DeQuantize", "QFunctional"]
