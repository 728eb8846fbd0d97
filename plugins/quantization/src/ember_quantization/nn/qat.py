"""Quantization-aware training modules: float Linear/Conv2d whose weight is fake-quantized in forward.

PyTorch counterpart: torch/ao/nn/qat/modules/linear.py and conv.py (v2.13).
"""

import ember


class Linear(ember.nn.Linear):
    """``F.linear(x, weight_fake_quant(weight), bias)``; ``convert`` makes it a quantized Linear."""

    _FLOAT_MODULE = ember.nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None):
        super().__init__(in_features, out_features, bias=bias)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return ember.nn.functional.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qat = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias
        return qat


class Conv2d(ember.nn.Conv2d):
    """``conv2d(x, weight_fake_quant(weight))``; ``convert`` makes it a quantized Conv2d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, qconfig=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return ember.nn.functional.conv2d(input, self.weight_fake_quant(self.weight), self.bias, self.stride,
                                          self.padding, self.dilation, self.groups)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        qat = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                  mod.groups, mod.bias is not None, qconfig=mod.qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias
        return qat


__all__ = ["Linear", "Conv2d"]
