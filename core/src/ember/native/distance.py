"""Distances between vectors: ``cdist`` (every row of one set against every row of
another), ``pairwise_distance``, ``cosine_similarity``, ``pdist`` and ``normalize``.

PyTorch counterpart: aten/src/ATen/native/Distance.cpp (``cdist``, ``_cdist_forward``,
``_cdist_backward``, ``_euclidean_dist``, ``pairwise_distance``, ``cosine_similarity``,
``_pdist_forward``, ``_pdist_backward``), cpu/DistanceOpsKernel.cpp, their
derivatives.yaml entries and torch/nn/functional.py (``normalize``) (v2.13).

``cdist(x1, x2, p)[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p``, with the batch
dims broadcast. ``p = 0`` counts the differing coordinates and ``p = inf`` takes the
largest difference. Two algorithms, chosen by a fixed rule as in PyTorch
(NOTE [ cdist's two algorithms ]).

    pairwise_distance(x1, x2)  ||x1 - x2 + eps||_p over the last dim (broadcast)
    cosine_similarity(x1, x2)  sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim)
    pdist(x)                   ||x_i - x_j||_p for every row pair i < j of an (N, M) x
    normalize(x)               x / max(||x||_p, eps) over dim

``pairwise_distance``, ``cosine_similarity`` and ``normalize`` are compositions of ember ops:
autograd gives their gradients. ``pdist`` is an op of its own (its output holds the
``N (N - 1) / 2`` distances of the upper triangle, never the full square), with a backward
op that scatters each pair's gradient to both of its rows, as torch's ``_pdist_backward``.
"""

import math

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.reduction.reduction import _norm_kernel

# NOTE [ cdist's two algorithms ]
# The reference forms every difference x1_i - x2_j: a (..., P, R, M) array, plain and
# exact for any p. For the Euclidean distance PyTorch has a second algorithm that needs
# no such array: ||a - b||^2 = ||a||^2 - 2 a.b + ||b||^2, one matrix product, clamped at 0
# (rounding can make a tiny squared distance negative) before the square root. It is
# faster and lighter but loses digits when two points nearly coincide. compute_mode
# picks: "use_mm_for_euclid_dist" always takes it for p = 2,
# "donot_use_mm_for_euclid_dist" never, and the default,
# "use_mm_for_euclid_dist_if_necessary", when either set has more than 25 points.

COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _differences(xp, x1, x2):
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist_kernel(xp, x1, x2, p):
    diff = xp.abs(_differences(xp, x1, x2))
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], dtype=x1.dtype)
    if p == 0:
        return (diff != 0).sum(axis=-1).astype(x1.dtype)
    if p == 1:
        return diff.sum(axis=-1)
    if p == 2:
        return xp.sqrt((diff * diff).sum(axis=-1))
    if math.isinf(p):
        return diff.max(axis=-1)
    return (diff ** p).sum(axis=-1) ** (1.0 / p)


def _sum_to(xp, a, shape):
    """``a`` summed over the leading (broadcast) dims down to ``shape``."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape)))) if a.ndim > len(shape) else a
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and a.shape[d] != 1)
    return a.sum(axis=axes, keepdims=True) if axes else a


def _cdist_backward_kernel(xp, grad, x1, x2, dist, p):
    # d dist_ij / d x1_i = sign(d) |d|^(p-1) / dist^(p-1), d = x1_i - x2_j; zero where
    # dist is 0 (the norm has no gradient there; PyTorch takes 0).
    diff = _differences(xp, x1, x2)
    dist = dist[..., None]
    with xp.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            partial = xp.zeros_like(diff)
        elif p == 1:
            partial = xp.sign(diff)
        elif p == 2:
            partial = diff / dist
        elif math.isinf(p):
            partial = xp.sign(diff) * (xp.abs(diff) == dist)
        else:
            partial = xp.sign(diff) * xp.abs(diff) ** (p - 1) / dist ** (p - 1)
            if p < 1:
                partial = xp.where(diff == 0, 0, partial)
    partial = xp.where(dist == 0, 0, partial) * grad[..., None]
    return _sum_to(xp, partial.sum(axis=-2), x1.shape), _sum_to(xp, -partial.sum(axis=-3), x2.shape)


CDIST_BACKWARD = Op("aten::_cdist_backward", _cdist_backward_kernel, None, num_outputs=2)


def _cdist_gradient(ctx, grad):
    x1, x2 = ctx.saved_inputs
    (dist,) = ctx.saved_outputs
    return CDIST_BACKWARD(grad, x1, x2, dist, p=ctx.attrs["p"])


CDIST = Op("aten::_cdist_forward", _cdist_kernel, _cdist_gradient, save="both", backward_name="CdistBackward0")


def _euclidean_kernel(xp, x1, x2):
    squared = (x1 * x1).sum(axis=-1)[..., :, None] - 2 * (x1 @ xp.swapaxes(x2, -1, -2)) + (x2 * x2).sum(axis=-1)[
        ..., None, :]
    return xp.sqrt(xp.maximum(squared, 0))


def _euclidean_gradient(ctx, grad):
    # With ratio = grad / dist (0 where dist is 0): the gradient of sum_ij ratio_ij *
    # ||x1_i - x2_j||^2 / 2, two matrix products.
    x1, x2 = ctx.saved_inputs
    (dist,) = ctx.saved_outputs
    ratio = (grad / dist).masked_fill(dist == 0, 0)
    grad_x1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2
    grad_x2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1
    return grad_x1.sum_to_size(x1.shape), grad_x2.sum_to_size(x2.shape)


EUCLIDEAN_DIST = Op("aten::_euclidean_dist", _euclidean_kernel, _euclidean_gradient, save="both")


def _check(x1, x2, p, compute_mode):
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_scalar_name(x.dtype)}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(x1.dtype)} but found {_scalar_name(x2.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")


def _scalar_name(dtype):
    from ember import dtypes

    return dtypes.SCALAR_TYPE_NAMES[dtype.name]


def _uses_mm(x1, x2, p, compute_mode):
    if p != 2 or compute_mode == "donot_use_mm_for_euclid_dist":
        return False
    return compute_mode == "use_mm_for_euclid_dist" or x1.shape[-2] > 25 or x2.shape[-2] > 25


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of ``x1`` (``..., P, M``) and those of ``x2``
    (``..., R, M``): a ``(..., P, R)`` tensor.

    >>> import ember
    >>> ember.cdist(ember.tensor([[0., 0.], [3., 4.]]), ember.tensor([[0., 0.]]))
    tensor([[0.],
            [5.]])
    """
    compute_mode = compute_mode or COMPUTE_MODES[0]
    _check(x1, x2, p, compute_mode)
    if _uses_mm(x1, x2, p, compute_mode):
        return EUCLIDEAN_DIST(x1, x2)
    return CDIST(x1, x2, p=float(p))


# --- pairwise_distance, cosine_similarity, pdist, normalize ---------------------
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim of the broadcast inputs.

    Args:
        x1, x2: tensors that broadcast together, e.g. ``(N, D)`` and ``(N, D)`` or ``(D,)``.
        p: the norm's degree (any number, ``inf`` included).
        eps: added to the difference, so that equal vectors have a gradient.
        keepdim: keep the reduced dim with size 1.

    >>> import ember
    >>> ember.nn.functional.pairwise_distance(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.]]), eps=0)
    tensor([5.])
    """
    last = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, last if last >= 0 else None, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``, each input divided by
    its own 2-norm (at least ``eps``) before the product, so the result stays within
    [-1, 1]. Integer inputs are converted to the floating dtype the other input brings.

    >>> import ember
    >>> ember.nn.functional.cosine_similarity(ember.tensor([[1., 0.]]), ember.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    from ember import result_type

    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_legacy_name(common)}")
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    shape = _broadcast_shape(x1, x2)
    x1, x2 = x1.broadcast_to(shape), x2.broadcast_to(shape)
    return (x1 / _norm_at_least(x1, dim, eps) * (x2 / _norm_at_least(x2, dim, eps))).sum(dim)


def _broadcast_shape(x1, x2):
    from ember.native.pointwise.binary import broadcast_error
    from ember.native.shape.shape import broadcast_shapes

    mismatch = broadcast_error(x1, x2)
    if mismatch is not None:
        raise mismatch
    return broadcast_shapes(x1.shape, x2.shape)


def _norm_at_least(x, dim, eps):
    # NOTE [ cosine_similarity's clamped norm ]
    # torch clamps the norms to eps in place, under no_grad: the value is max(norm, eps),
    # but the gradient flows through the norm as though it had not been clamped. Adding
    # the (detached) amount the clamp raised the norm by gives that value and that gradient.
    norm = x.norm(2, dim, keepdim=True)
    raised = norm.detach().clamp_min(eps) - norm.detach()
    return norm + raised


def _legacy_name(dtype):
    from ember.native.factory import _legacy_name as name

    return name(dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm over ``dim``, the norm taken as at least ``eps``;
    ``out``, a tensor of ``input``'s shape, receives the result (ember has no ``out=`` on its
    ops, so the result is computed and copied in).

    >>> import ember
    >>> ember.nn.functional.normalize(ember.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    denominator = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denominator
    return out.copy_(input / denominator)


# --- pdist: the upper triangle of the pairwise distances of a set of rows -------------


def _pdist_kernel(xp, x, p):
    """Row ``i`` against every later row ``j > i``, one block of the output per ``i``."""
    n = x.shape[0]
    if n < 2 or x.shape[1] == 0:  # no pairs, or rows of no components: every distance is 0 (inf-norm too)
        return xp.zeros((n * (n - 1) // 2,), dtype=x.dtype)
    return xp.concatenate([_norm_kernel(xp, x[i + 1:] - x[i], p, (1,), False) for i in range(n - 1)])


def _pdist_backward(ctx, grad):
    (x,) = ctx.saved_inputs
    (distances,) = ctx.saved_outputs
    return (PDIST_BACKWARD(grad, x, distances, p=ctx.attrs["p"]),)


PDIST = Op("aten::_pdist_forward", _pdist_kernel, _pdist_backward, save="both", backward_name="PdistBackward0")


def _pair_slope(xp, diff, distance, p):
    """d distance / d x_i for the pairs ``diff = x_i - x_j`` with ``distance`` (a column):
    zero where the distance is zero, as torch's kernel has it."""
    safe = xp.where(distance == 0, 1, distance)
    if p == 0:
        return xp.zeros_like(diff)
    if p == 1:
        slope = xp.sign(diff)
    elif p == 2:
        slope = diff / safe
    elif p == np.inf:
        # Every component whose magnitude is the distance gets the whole slope (torch
        # does not share it among ties, as the inf-norm's own backward does).
        slope = xp.sign(diff) * (xp.abs(diff) == distance)
    else:
        magnitude = xp.abs(diff)
        power = xp.power(xp.where(magnitude == 0, 1, magnitude), p - 1)
        slope = xp.where(magnitude == 0, 0, xp.sign(diff) * power / xp.power(safe, p - 1))
    return xp.where(distance == 0, 0, slope)


def _pdist_backward_kernel(xp, grad, x, distances, p):
    """Each pair (i, j) adds ``grad * slope`` to row i and subtracts it from row j."""
    n = x.shape[0]
    out = xp.zeros_like(x)
    start = 0
    for i in range(n - 1):
        stop = start + n - 1 - i
        diff = x[i] - x[i + 1:]
        scaled = grad[start:stop, None] * _pair_slope(xp, diff, distances[start:stop, None], p)
        out[i] += scaled.sum(axis=0)
        out[i + 1:] -= scaled
        start = stop
    return out


PDIST_BACKWARD = Op("aten::_pdist_backward", _pdist_backward_kernel, None, promote=NONE)


def pdist(input, p=2.0):
    """The ``p``-norm distance between every pair of rows ``i < j`` of a 2-D ``input``, as a
    vector of ``N (N - 1) / 2`` values in row-major order of the upper triangle.

    >>> import ember
    >>> ember.nn.functional.pdist(ember.tensor([[0., 0.], [3., 4.], [6., 8.]]))
    tensor([ 5., 10.,  5.])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return PDIST(input.contiguous(), p=float(p))


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), over all elements: the distance
    between two points given as tensors.

    >>> import ember
    >>> ember.dist(ember.tensor([0., 0.]), ember.tensor([3., 4.]))
    tensor(5.)
    """
    from ember.native.pointwise.binary import sub

    return sub(input, other).norm(p)

