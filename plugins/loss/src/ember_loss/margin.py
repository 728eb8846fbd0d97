"""Margin losses: soft margin, hinge embedding, multi-class and multi-label margins, and the
triplet loss with any distance.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``soft_margin_loss``,
``hinge_embedding_loss``), LossMultiMargin.cpp, LossMultiLabelMargin.cpp and
torch/nn/functional.py (``multilabel_soft_margin_loss``,
``triplet_margin_with_distance_loss``) (v2.13).

    soft_margin              log(1 + exp(-y x))
    hinge_embedding          x where y == 1, max(0, margin - x) where y == -1
    multi_margin             sum_{i != y} max(0, margin - x[y] + x[i])^p * w[y] / C
    multilabel_margin        sum_{j in targets} sum_{i not in targets} max(0, 1 - (x[j] - x[i])) / C
    multilabel_soft_margin   -mean_c (y_c log sigmoid(x_c) + (1 - y_c) log sigmoid(-x_c)) (weighted)
    triplet_margin_with_distance  max(0, d(a, p) - d(a, n) + margin), any distance d

All are compositions of ember ops: autograd gives every gradient.
"""

import numpy as np

import ember
from ember_loss import reduction as reductions


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The logistic loss of a two-class margin: ``log(1 + exp(-target * input))``.

    >>> import ember
    >>> from ember_loss.margin import soft_margin_loss
    >>> soft_margin_loss(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    return reductions.apply((-input * target).exp().log1p(), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target`` is 1 (a distance to shrink), ``max(0, margin - input)`` where
    it is -1 (a distance to grow past ``margin``); other targets contribute only by both rules.

    >>> import ember
    >>> from ember_loss.margin import hinge_embedding_loss
    >>> hinge_embedding_loss(ember.tensor([0.3, 0.2]), ember.tensor([1.0, -1.0]))
    tensor(0.5500)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    zeros = ember.zeros_like(input)
    below_margin = ember.where(target != 1, (margin - input).clamp_min(0), zeros)
    distance = ember.where(target != -1, input, zeros)
    return reductions.apply(below_margin + distance, reduction)


def _check_multi_margin(input, target, p, weight):
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    classes = input.shape[-1] if input.ndim else 1
    if not (input.ndim <= 1 and target.ndim <= 1 or input.ndim == 2 and target.ndim == 1):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    rows = input.shape[0] if input.ndim == 2 else 1
    if target.numel() != rows:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{rows}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.numel() != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: every wrong class scoring within ``margin`` of the right one
    costs the gap (squared for ``p=2``), weighted by the right class's ``weight``, over C.

    >>> import ember
    >>> from ember_loss.margin import multi_margin_loss
    >>> multi_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3]))
    tensor(0.3250)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    _check_multi_margin(input, target, p, weight)
    rows = input.reshape(-1, input.shape[-1] if input.ndim else 1)
    labels = target.reshape(-1, 1)
    right = rows.gather(1, labels)
    gaps = (margin - right + rows).clamp_min(0)
    if p == 2:
        gaps = gaps * gaps
    if weight is not None:
        gaps = gaps * weight[labels.reshape(-1)].unsqueeze(1)
    wrong = ember.ones_like(rows).scatter(1, labels, 0.0)
    loss = (gaps * wrong).sum(1) / rows.shape[1]
    return reductions.apply(loss.reshape(target.shape) if input.ndim == 2 else loss.reshape(()), reduction)


def _target_counts(target, classes):
    """How often each class is listed in each row of ``target``, up to its first -1."""
    labels = target.detach().numpy().reshape(-1, classes)
    counts = np.zeros(labels.shape, dtype=np.int64)
    for row, listed in enumerate(labels):
        for label in listed:
            if label < 0:
                break
            counts[row, label] += 1
    return counts


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``target`` lists each sample's classes (ended by -1); every
    other class scoring within 1 of a listed one costs the gap, over C.

    >>> import ember
    >>> from ember_loss.margin import multilabel_margin_loss
    >>> multilabel_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape) and input.ndim > 0:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    classes = input.shape[-1] if input.ndim else 1
    rows = input.reshape(-1, classes)
    counts = ember.tensor(_target_counts(target, classes), dtype=input.dtype, device=input.device)
    listed = counts.unsqueeze(2)                     # (N, j, 1): how often class j is a target
    others = (counts == 0).to(input.dtype).unsqueeze(1)  # (N, 1, i): class i is not a target
    gaps = (1 - rows.unsqueeze(2) + rows.unsqueeze(1)).clamp_min(0)  # 1 - (x[j] - x[i])
    loss = (gaps * listed * others).sum((1, 2)) / classes
    return reductions.apply(loss if input.ndim == 2 else loss.reshape(()), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per class, the binary cross-entropy of ``sigmoid(input)`` against ``target`` (0 or 1),
    averaged over the classes (weighted by ``weight``).

    >>> import ember
    >>> from ember_loss.margin import multilabel_soft_margin_loss
    >>> multilabel_soft_margin_loss(ember.tensor([[0.0, 0.0]]), ember.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    logsigmoid = ember.nn.functional.logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return reductions.apply(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (pairwise distance
    by default), e.g. ``1 - cosine_similarity``.

    >>> import ember
    >>> from ember_loss.margin import triplet_margin_with_distance_loss
    >>> a, p, n = ember.tensor([[0.0, 0.0]]), ember.tensor([[1.0, 0.0]]), ember.tensor([[1.5, 0.0]])
    >>> triplet_margin_with_distance_loss(a, p, n)
    tensor(0.5000)
    """
    reduction = reductions.check(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else ember.pairwise_distance
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:
        negative_distance = ember.minimum(negative_distance, distance(positive, negative))
    return reductions.apply((margin + positive_distance - negative_distance).clamp_min(0), reduction)
