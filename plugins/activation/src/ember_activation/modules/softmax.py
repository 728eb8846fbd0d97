"""Modules of the normalising activations: Softmax, LogSoftmax, Softmin, Softmax2d.

PyTorch counterpart: the corresponding classes of torch/nn/modules/activation.py (v2.13).
"""

from ember.nn import Module
from ember_activation import softmax as F


class Softmax(Module):
    """``exp(x) / sum(exp(x), dim)``: each slice along ``dim`` sums to 1."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``x - logsumexp(x, dim)``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x, dim)``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels at every location of a ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3, _stacklevel=5)


MODULES = (Softmax, LogSoftmax, Softmin, Softmax2d)
