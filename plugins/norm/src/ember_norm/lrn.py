"""``LocalResponseNorm``: normalization across neighbouring channels (AlexNet).

PyTorch counterpart: torch/nn/modules/normalization.py, class ``LocalResponseNorm`` (v2.13).
"""

from ember.nn import Module
from ember_norm.functional import local_response_norm


class LocalResponseNorm(Module):
    """Divide each value by ``(k + alpha / size * sum of squares of size neighbouring channels) ** beta``.

    >>> import ember
    >>> ember.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["LocalResponseNorm"]
