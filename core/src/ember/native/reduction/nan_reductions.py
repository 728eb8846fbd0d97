"""Reductions that skip NaN: ``nansum`` (NaN counts as zero) and ``nanmean`` (the mean
of the non-NaN elements), and ``aminmax`` (both extremes at once).

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``nansum``, ``nanmean``,
``aminmax``) and their derivatives.yaml entries (v2.13).

``nansum`` is one op whose backward is PyTorch's: the expanded gradient times "not NaN",
so a NaN position gets ``grad * 0`` (NaN where the gradient is infinite, as a fully NaN
row's mean gives). ``nanmean`` is ``nansum`` over the count of non-NaN elements. ``aminmax`` is one op
(``AminmaxBackward0``) that shares each extreme's gradient evenly among its ties, as
``amin``/``amax`` (and PyTorch) do.
"""

import collections

from ember.dispatcher import DEFAULT, NONE, Op
from ember.native.reduction.reduction import (
    _accumulate_dtype,
    _axis,
    _cast_to_reduced,
    contiguous_result,
    expand_reduced,
    reduction_dims,
)
from ember.native.reduction.reduction import sum as sum_

return_types_aminmax = collections.namedtuple("aminmax", ["min", "max"])


def _nansum_kernel(xp, a, dims, keepdim, dtype=None):
    return xp.nansum(a, axis=_axis(dims, a.ndim), dtype=dtype, keepdims=keepdim)


def _nansum_backward(ctx, grad):
    (a,) = ctx.saved_inputs
    return (expand_reduced(grad, a.shape, ctx.attrs["dims"], ctx.attrs["keepdim"]) * a.isnan().logical_not(),)


NANSUM = Op("aten::nansum", contiguous_result(_nansum_kernel), _nansum_backward, promote=DEFAULT, save="inputs",
            opmath=True)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaN read as zero.

    >>> import ember
    >>> ember.tensor([1., float("nan"), 2.]).nansum()
    tensor(3.)
    """
    if not input.dtype.is_floating_point:
        return sum_(input, dim, keepdim, dtype=dtype)
    dims = reduction_dims(dim, input.ndim)
    accumulate = _accumulate_dtype(input, dtype)
    input = _cast_to_reduced(input, accumulate)
    if accumulate is None:
        return NANSUM(input, dims=dims, keepdim=keepdim)
    return NANSUM(input, dims=dims, keepdim=keepdim, dtype=accumulate)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements (NaN where there are none).

    >>> import ember
    >>> ember.tensor([1., float("nan"), 2.]).nanmean()
    tensor(1.5000)
    """
    if not input.dtype.is_floating_point:
        from ember.native.support._inplace import _type_name

        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_name(input.dtype)}")
    count = sum_(input.isnan().logical_not(), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def aminmax(input, *, dim=None, keepdim=False):
    """The smallest and largest elements (over ``dim`` if given), a ``(min, max)`` tuple.

    >>> import ember
    >>> ember.aminmax(ember.tensor([[1, 5], [3, 2]]), dim=0)
    aminmax(min=tensor([1, 2]), max=tensor([3, 5]))
    """
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = tuple(range(input.ndim))
    else:
        dims = reduction_dims(dim, input.ndim)  # a 0-d input reduces over nothing
        if dims and input.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    return return_types_aminmax(*AMINMAX(input, dims=dims, keepdim=keepdim))


def _aminmax_kernel(xp, a, dims, keepdim):
    axis = dims if a.ndim else None
    return xp.amin(a, axis=axis, keepdims=keepdim), xp.amax(a, axis=axis, keepdims=keepdim)


def _aminmax_backward(ctx, grad_min, grad_max):
    """Each extreme's gradient shared evenly among its ties, as amin's and amax's."""
    (x,) = ctx.saved_inputs
    lowest, highest = ctx.saved_outputs
    dims, keepdim = ctx.attrs["dims"], ctx.attrs["keepdim"]
    total = None
    for grad, extreme in ((grad_min, lowest), (grad_max, highest)):
        if grad is None:
            continue
        mask = x == expand_reduced(extreme, x.shape, dims, keepdim)
        share = mask * expand_reduced(grad, x.shape, dims, keepdim) / mask.sum(dims, keepdim=True)
        total = share if total is None else total + share
    return (total,)


AMINMAX = Op("aten::aminmax", _aminmax_kernel, _aminmax_backward, promote=NONE, save="both", num_outputs=2)
