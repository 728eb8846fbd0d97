"""The int8 Linear module: quint8 activations, qint8 weights, an int32 accumulator.

PyTorch counterpart: torch/ao/nn/quantized/modules/linear.py (v2.13).

The weight and float bias are kept as torch keeps them in its state dict, under
``_packed_params._packed_params`` (a ``(weight, bias)`` tuple) with
``_packed_params.dtype``, next to the output ``scale`` and ``zero_point``, so a
converted torch model's state dict loads. Like torch, the module packs its weight for
the kernel once, not per call (NOTE [ Packed weights ] in ember_quantization/kernels.py).
"""

import ember
from ember_quantization import kernels
from ember_quantization.dtypes import per_tensor_affine, qint8, quint8
from ember_quantization.nn.quantized.utils import WeightedQuantizedModule, require_quantized
from ember_quantization.qtensor import QTensor, quantize_per_tensor


class Linear(WeightedQuantizedModule):
    """``y = x W^T + b`` on quantized tensors; the output has this module's ``scale``/``zero_point``."""

    _FLOAT_MODULE = ember.nn.Linear
    _names = ("QuantizedLinear", "QuantizedLinearReLU")

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.scale, self.zero_point = 1.0, 0
        self.weight_dtype = dtype
        weight = quantize_per_tensor(ember.zeros(out_features, in_features), 1.0, 0, qint8)
        self.set_weight_bias(weight, ember.zeros(out_features) if bias_ else None)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self._weight.qscheme()}")

    def forward(self, x):
        x = require_quantized(x, self._get_name())
        packed = self._packed_weight(kernels.activation_bound(x.q_zero_point()))
        out = kernels.linear(x._int_repr, packed, self._scales, self._bias_or_zeros, x_scale=x.q_scale(),
                             x_zero_point=x.q_zero_point(), out_scale=self.scale, out_zero_point=self.zero_point,
                             relu=self._relu)
        return QTensor(out, quint8, self.scale, self.zero_point)

    # --- torch's state-dict layout ---------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)
        destination[prefix + "_packed_params.dtype"] = self.weight_dtype
        destination[prefix + "_packed_params._packed_params"] = (self._weight, self._bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for key in ("scale", "zero_point", "_packed_params.dtype", "_packed_params._packed_params"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        self._load_output_qparams(state_dict, prefix)
        if prefix + "_packed_params._packed_params" in state_dict:
            self.set_weight_bias(*state_dict[prefix + "_packed_params._packed_params"])

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized twin of an observed float Linear (after ``prepare`` and calibration)."""
        linear, relu, weight_observer, qparams = cls._observed(mod)  # a fused LinearReLU: (Linear, ReLU)
        qlinear = cls(linear.in_features, linear.out_features, dtype=weight_observer.dtype)
        relu = relu or getattr(mod, "_fused_relu", False)
        return qlinear._take_observed(linear, relu, weight_observer, qparams)


__all__ = ["Linear", "per_tensor_affine"]
