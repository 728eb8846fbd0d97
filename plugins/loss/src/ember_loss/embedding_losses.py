"""Losses on pairs and triplets of embeddings: cosine, margin ranking, triplet margin.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``cosine_embedding_loss``,
``margin_ranking_loss``, ``triplet_margin_loss``), Distance.cpp (``pairwise_distance``)
and torch/nn/functional.py (their checks) (v2.13). ``pairwise_distance`` is the core's
(ember/native/distance.py).

    cosine_embedding   1 - cos(x1, x2)             if y == 1
                       max(0, cos(x1, x2) - margin) if y == -1
    margin_ranking     max(0, -y * (x1 - x2) + margin)
    triplet_margin     max(0, d(a, p) - d(a, n) + margin),  d(u, v) = ||u - v + eps||_p
                       (with swap, d(a, n) becomes min(d(a, n), d(p, n)))

All three are compositions of ember ops; autograd gives every gradient.
"""

import ember
from ember.amp.state import composite_inputs
from ember_loss import reduction as reductions

COSINE_EPSILON = 1e-12  # added to the squared norms, as in PyTorch


def _size(t):
    return t.shape


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Pull pairs labelled 1 together, push pairs labelled -1 below ``margin`` in cosine.

    Args:
        input1, input2: ``(N, D)`` with target ``(N,)``, or ``(D,)`` with a 0-d target.
        target: 1 or -1 per pair (other values contribute 0).

    >>> import ember
    >>> from ember_loss.embedding_losses import cosine_embedding_loss
    >>> cosine_embedding_loss(ember.tensor([[1.0, 0.0]]), ember.tensor([[0.0, 1.0]]), ember.tensor([1]))
    tensor(1.)
    """
    input1, input2, target = composite_inputs("cosine_embedding_loss", input1, input2, target)  # fp32 list
    reduction = reductions.resolve(size_average, reduce, reduction)
    if target.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    dim = target.ndim
    if dim == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if dim == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(dim)
    squared1 = (input1 * input1).sum(dim) + COSINE_EPSILON
    squared2 = (input2 * input2).sum(dim) + COSINE_EPSILON
    cos = dot / (squared1 * squared2).sqrt()
    zeros = ember.zeros_like(cos)
    positive = ember.where(target == 1, 1 - cos, zeros)
    negative = ember.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return reductions.apply(positive + negative, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Rank ``input1`` above ``input2`` where ``target`` is 1 (below where -1), by ``margin``.

    >>> import ember
    >>> from ember_loss.embedding_losses import margin_ranking_loss
    >>> margin_ranking_loss(ember.tensor([1.0, 0.0]), ember.tensor([0.0, 1.0]), ember.tensor([1.0, 1.0]))
    tensor(0.5000)
    """
    input1, input2, target = composite_inputs("margin_ranking_loss", input1, input2, target)  # on autocast's fp32 list
    reduction = reductions.resolve(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return reductions.apply((-target * (input1 - input2) + margin).clamp_min(0), reduction)


pairwise_distance = ember.pairwise_distance  # ``||x1 - x2 + eps||_p`` over the last dim (ember/native/distance.py)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """Make ``anchor`` closer to ``positive`` than to ``negative`` by at least ``margin``.

    >>> import ember
    >>> from ember_loss.embedding_losses import triplet_margin_loss
    >>> a, p, n = ember.tensor([[0.0, 0.0]]), ember.tensor([[1.0, 0.0]]), ember.tensor([[3.0, 0.0]])
    >>> triplet_margin_loss(a, p, n)
    tensor(0.)
    """
    anchor, positive, negative = composite_inputs("triplet_margin_loss", anchor, positive, negative)  # fp32
    reduction = reductions.resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_negative = ember.minimum(distance_negative, pairwise_distance(positive, negative, p, eps))
    return reductions.apply((margin + distance_positive - distance_negative).clamp_min(0), reduction)
