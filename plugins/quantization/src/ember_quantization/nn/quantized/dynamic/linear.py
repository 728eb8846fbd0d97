"""The dynamically quantized Linear: int8 weights stored, activations quantized per call.

PyTorch counterpart: torch/ao/nn/quantized/dynamic/modules/linear.py (v2.13).

Float in, float out: each call chooses the input's scale and zero point from its own
min and max (``reduce_range=True``, the 7-bit range torch uses on x86), multiplies
in exact integers and rescales to float32, with the weight packed once (NOTE [ Packed
weights ] in ember_quantization/kernels.py). State-dict keys are torch's.
"""

from ember_quantization import kernels
from ember_quantization.dtypes import qint8
from ember_quantization.nn.quantized.linear import Linear as StaticLinear
from ember_quantization.nn.quantized.utils import quantize_weight


class Linear(StaticLinear):
    """``y = x W^T + b`` with int8 ``W``; ``x`` and ``y`` are float tensors."""

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__(in_features, out_features, bias_, dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, dtype={self.weight_dtype}, "
                f"qscheme={self._weight.qscheme()}")

    def forward(self, x):
        packed = self._packed_weight(kernels.activation_bound(0, 0, 127))  # reduce_range: 7-bit activations
        return kernels.linear_dynamic(x.detach(), packed, self._scales, self._bias_or_zeros, reduce_range=True)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        from ember_quantization.qconfig import default_dynamic_qconfig

        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        weight_observer = qconfig.weight()
        weight_observer(mod.weight)
        qlinear = cls(mod.in_features, mod.out_features, dtype=weight_observer.dtype)
        qlinear.set_weight_bias(quantize_weight(mod.weight, weight_observer),
                                None if mod.bias is None else mod.bias.detach().clone())
        return qlinear


__all__ = ["Linear"]
