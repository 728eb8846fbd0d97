"""Quantized ReLU, and the modules that move between float and quantized tensors.

PyTorch counterpart: torch/ao/nn/quantized/modules/activation.py and the ``Quantize`` /
``DeQuantize`` classes of torch/ao/nn/quantized/modules/__init__.py (v2.13).
"""

import ember
from ember_quantization import kernels
from ember_quantization.dtypes import as_qdtype
from ember_quantization.nn.quantized.utils import require_quantized
from ember_quantization.qtensor import QTensor, quantize_per_tensor


class ReLU(ember.nn.Module):
    """``max(q, zero_point)`` on the integers: same scale and zero point out as in."""

    def __init__(self, inplace=False):
        super().__init__()

    def _get_name(self):
        return "QuantizedReLU"

    def forward(self, x):
        x = require_quantized(x, "QuantizedReLU")
        return QTensor(kernels.relu(x._int_repr, zero_point=x.q_zero_point()), x.dtype, x.q_scale(),
                       x.q_zero_point())

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls()


class Quantize(ember.nn.Module):
    """Quantize float input with a fixed scale and zero point (what a QuantStub becomes)."""

    def __init__(self, scale, zero_point, dtype):
        super().__init__()
        self.register_buffer("scale", ember.tensor([float(scale)]))
        self.register_buffer("zero_point", ember.tensor([int(zero_point)], dtype=ember.int64))
        self.dtype = as_qdtype(dtype)

    def forward(self, x):
        return quantize_per_tensor(x, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(scale.item()), int(zero_point.item()), mod.activation_post_process.dtype)


class DeQuantize(ember.nn.Module):
    """Quantized input back to float32 (what a DeQuantStub becomes)."""

    def forward(self, x):
        return x.dequantize()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls()


__all__ = ["ReLU", "Quantize", "DeQuantize"]
