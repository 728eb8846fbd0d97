"""``Dropout``, ``Dropout1d``, ``Dropout2d``, ``Dropout3d``: zero elements or channels in
training; ``AlphaDropout`` and ``FeatureAlphaDropout``: their SELU-preserving forms.

PyTorch counterpart: torch/nn/modules/dropout.py (v2.13).

In ``eval()`` mode every dropout layer returns its input unchanged.
"""

from ember.nn import functional as F
from ember.nn.modules.module import Module


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training and scale the rest by
    ``1 / (1 - p)`` (draws from ember's default generator).

    >>> import ember
    >>> m = ember.nn.Dropout(p=0.2)
    >>> m(ember.ones(20, 16)).shape
    ember.Size([20, 16])
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p``."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p``."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` inputs with probability ``p``."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's mean and variance (NOTE [ Alpha dropout ] in ember/native/dropout.py).

    >>> import ember
    >>> ember.nn.AlphaDropout(0.2)(ember.ones(4, 3)).shape
    ember.Size([4, 3])
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
