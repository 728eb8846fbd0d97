"""The int8 Conv2d module: quint8 activations, qint8 weights per output channel.

PyTorch counterpart: torch/ao/nn/quantized/modules/conv.py (v2.13). The state dict
has torch's keys for this module: ``weight`` (the quantized weight), ``bias`` (float),
``scale`` and ``zero_point``. ember supports zero padding only.
"""

import ember
from ember_quantization import kernels
from ember_quantization.dtypes import qint8, quint8
from ember_quantization.nn.quantized.utils import WeightedQuantizedModule, require_quantized
from ember_quantization.qtensor import QTensor, quantize_per_tensor


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


class Conv2d(WeightedQuantizedModule):
    """2-d convolution on quantized tensors; the output has this module's ``scale``/``zero_point``."""

    _names = ("QuantizedConv2d", "QuantizedConvReLU2d")

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros"):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"ember's quantized Conv2d supports padding_mode='zeros' only, got "
                                      f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.scale, self.zero_point = 1.0, 0
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.set_weight_bias(quantize_per_tensor(ember.zeros(*shape), 1.0, 0, qint8),
                             ember.zeros(out_channels) if bias else None)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"scale={self.scale}, zero_point={self.zero_point}")

    def forward(self, x):
        x = require_quantized(x, self._get_name())
        packed = self._packed_weight(kernels.activation_bound(x.q_zero_point()))
        out = kernels.conv2d(x._int_repr, packed, self._scales, self._bias_or_zeros, kernel_size=self.kernel_size,
                             stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups,
                             x_scale=x.q_scale(), x_zero_point=x.q_zero_point(), out_scale=self.scale,
                             out_zero_point=self.zero_point, relu=self._relu)
        return QTensor(out, quint8, self.scale, self.zero_point)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"] = self._weight
        destination[prefix + "bias"] = self._bias
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for key in ("weight", "bias", "scale", "zero_point"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        if prefix + "weight" in state_dict:
            self.set_weight_bias(state_dict[prefix + "weight"], state_dict.get(prefix + "bias"))
        self._load_output_qparams(state_dict, prefix)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        conv, relu, weight_observer, qparams = cls._observed(mod)  # a fused ConvReLU2d: (Conv2d, ReLU)
        qconv = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                    conv.dilation, conv.groups, conv.bias is not None)
        return qconv._take_observed(conv, relu, weight_observer, qparams)


__all__ = ["Conv2d"]
