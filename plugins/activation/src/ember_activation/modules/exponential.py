"""Modules of the exponential linear units: ELU, SELU, CELU.

PyTorch counterpart: the corresponding classes of torch/nn/modules/activation.py (v2.13).
"""

from ember.nn import Module
from ember_activation import exponential as F


class ELU(Module):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(Module):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


MODULES = (ELU, CELU, SELU)
