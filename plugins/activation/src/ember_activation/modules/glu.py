"""The GLU module.

PyTorch counterpart: ``GLU`` in torch/nn/modules/activation.py (v2.13).
"""

from ember.nn import Module
from ember_activation import glu as F


class GLU(Module):
    """``a * sigmoid(b)`` for the two halves ``a``, ``b`` of the input along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


MODULES = (GLU,)
