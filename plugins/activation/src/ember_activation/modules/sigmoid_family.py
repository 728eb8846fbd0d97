"""Modules of the sigmoid-based activations: Sigmoid, Tanh, SiLU, Mish, Softplus,
LogSigmoid, Hardsigmoid, Hardswish, Softsign, Tanhshrink.

PyTorch counterpart: the corresponding classes of torch/nn/modules/activation.py (v2.13).
"""

from ember.nn import Module
from ember_activation import sigmoid_family as F


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return F.tanh(input)


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Mish(Module):
    """``x * tanh(softplus(x))``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(Module):
    """``clamp(x / 6 + 1/2, 0, 1)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """``x * hardsigmoid(x)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold / beta``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


MODULES = (Sigmoid, Tanh, SiLU, Mish, Hardsigmoid, Hardswish, Softplus, LogSigmoid, Softsign, Tanhshrink)
