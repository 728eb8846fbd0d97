"""``cdist``: the p-norm distance between every row of one batch of point sets and every
row of another.

PyTorch counterpart: aten/src/ATen/native/Distance.cpp (``cdist``, ``_cdist_forward``,
``_cdist_backward``, ``_euclidean_dist``) and their derivatives.yaml entries (v2.13).

``cdist(x1, x2, p)[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p``, with the batch
dims broadcast. ``p = 0`` counts the differing coordinates and ``p = inf`` takes the
largest difference. Two algorithms, chosen by a fixed rule as in PyTorch
(NOTE [ cdist's two algorithms ]).
"""

import math

from ember.dispatcher import Op

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

