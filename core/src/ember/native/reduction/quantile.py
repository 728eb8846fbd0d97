"""Quantiles: ``quantile`` (NaN anywhere in a line makes its quantiles NaN) and
``nanquantile`` (NaN ignored), along a dim or over all elements, with five ways to
land between two data points.

PyTorch counterpart: aten/src/ATen/native/Sorting.cpp (``quantile``,
``nanquantile``, ``quantile_compute``) (v2.13).

A quantile is read from the sorted line: q at rank ``q * (n - 1)`` (n counts the
non-NaN values for ``nanquantile``). A whole rank picks that element; between two,
``interpolation`` decides: ``linear`` interpolates, ``lower``/``higher`` take the
neighbour below/above, ``nearest`` the closer one (a tie to the even rank, as
``round`` does), ``midpoint`` their mean. PyTorch builds it from ``sort``,
``gather`` and ``lerp``, and so does ember: the gradient is theirs, flowing to the
one or two elements each quantile was read from.
"""

from ember import dtypes
from ember.tensor import Tensor, _wrap_dim

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(input, q, interpolation):
    name = "quantile"  # nanquantile reports as quantile too, as in PyTorch
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and (bool((q < 0).any()) or bool((q > 1).any())):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")


def _ranks(sorted_lines, q, ignore_nan):
    """The (fractional) sorted position of each quantile of each line: ``(..., len(q))``."""
    n = sorted_lines.shape[-1]
    nans = sorted_lines.isnan()
    if ignore_nan:
        valid = n - nans.sum(-1, keepdim=True)
        ranks = q * (valid - 1).to(q.dtype)
        return ranks.masked_fill(valid == 0, 0)  # an all-NaN line: read its first element, a NaN
    ranks = (q * (n - 1)).expand(tuple(sorted_lines.shape[:-1]) + (q.shape[0],))
    return ranks.masked_fill(nans.any(-1, keepdim=True), n - 1)  # a line with NaN: its last element, a NaN


def _interpolate(sorted_lines, ranks, interpolation):
    if interpolation in ("lower", "higher", "nearest"):
        rounded = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}[interpolation]()
        return sorted_lines.gather(-1, rounded.long())
    below, above = ranks.floor(), ranks.ceil()
    low, high = sorted_lines.gather(-1, below.long()), sorted_lines.gather(-1, above.long())
    weight = ranks - below if interpolation == "linear" else ranks * 0 + 0.5
    return low.lerp(high, weight)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    _check(input, q, interpolation)
    from ember.native.factory import tensor

    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    q_values = (q if isinstance(q, Tensor) else tensor(q, dtype=input.dtype, device=input.device)).reshape(-1)
    if dim is None:
        lines, out_shape = input.reshape(-1), [1] * input.ndim if keepdim else []
    else:
        dim = _wrap_dim(dim, input.ndim)
        lines = input.movedim(dim, -1) if input.ndim else input.reshape(1)
        out_shape = list(input.shape)
        if keepdim and input.ndim:
            out_shape[dim] = 1
        elif input.ndim:
            del out_shape[dim]
    sorted_lines = lines.sort(-1).values
    values = _interpolate(sorted_lines, _ranks(sorted_lines, q_values, ignore_nan),
                          interpolation)
    values = values.movedim(-1, 0)  # (len(q), ...lines)
    if scalar_q:
        return values.reshape(out_shape)
    return values.reshape([q_values.shape[0]] + out_shape)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` (all elements, or each line along ``dim``);
    a 1-d ``q`` prepends a dim with one entry per quantile.

    >>> import ember
    >>> ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5)
    tensor(2.5000)
    >>> ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5, interpolation="lower")
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` of the non-NaN elements (NaN only for an all-NaN line).

    >>> import ember
    >>> ember.nanquantile(ember.tensor([1., float("nan"), 3.]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)
