"""The GELU module.

PyTorch counterpart: ``GELU`` in torch/nn/modules/activation.py (v2.13).
"""

from ember.nn import Module
from ember_activation import gelu as F


class GELU(Module):
    """``x * Phi(x)``, exact (``approximate="none"``) or with the tanh formula (``"tanh"``)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


MODULES = (GELU,)
