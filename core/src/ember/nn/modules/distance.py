"""``PairwiseDistance`` and ``CosineSimilarity``: the modules of ``pairwise_distance`` and
``cosine_similarity``.

PyTorch counterpart: torch/nn/modules/distance.py (v2.13).
"""

from ember.native.distance import cosine_similarity, pairwise_distance
from ember.nn.modules.module import Module


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dim; ``(N, D), (N, D) -> (N,)``.

    >>> import ember
    >>> ember.nn.PairwiseDistance(eps=0)(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.]]))
    tensor([5.])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``; ``(N, D), (N, D) -> (N,)``.

    >>> import ember
    >>> ember.nn.CosineSimilarity()(ember.tensor([[1., 0.]]), ember.tensor([[1., 1.]]))
    tensor([0.7071])
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)
