"""Fused float modules that convert to one quantized kernel: ``LinearReLU``, ``ConvReLU2d``.

PyTorch counterpart: torch/ao/nn/intrinsic/modules/fused.py (v2.13). As in torch they
are ``Sequential`` containers (keys ``0.weight``, ...), so observers see only their output.
"""

import ember


class LinearReLU(ember.nn.Sequential):
    """Linear followed by ReLU, quantized as one ``QuantizedLinearReLU``."""

    def __init__(self, linear, relu):
        super().__init__(linear, relu)


class ConvReLU2d(ember.nn.Sequential):
    """Conv2d followed by ReLU, quantized as one ``QuantizedConvReLU2d``."""

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


__all__ = ["LinearReLU", "ConvReLU2d"]
