"""Medians and modes: ``median``, ``nanmedian`` (NaN ignored) and ``mode`` (the most
frequent value), each with ``(values, indices)`` along a dim.

PyTorch counterpart: aten/src/ATen/native/Sorting.cpp (``median``, ``nanmedian``),
aten/src/ATen/native/cpu/SortingKernel.cpp (``mode``) and their derivatives.yaml
entries (v2.13).

The median of n values is the lower one, sorted position (n - 1) // 2, as in PyTorch
(no averaging). Along a dim, ties pick the element a stable sort puts there, which is
PyTorch's index; ``median`` of a line holding NaN is NaN with the index of its first
NaN. ``mode`` picks the smallest of the most frequent values and the index of its last
occurrence. Gradients: along a dim, the gradient goes to the returned index; without a
dim (one value), it is shared evenly among the elements equal to the median.
"""

import collections

import numpy as np

from ember import dtypes
from ember.dispatcher import NONE, Op
from ember.dtypes import is_floating_array
from ember.native.reduction.introsort import SMALL, mode_of_line
from ember.tensor import _wrap_dim

return_types_median = collections.namedtuple("median", ["values", "indices"])
return_types_nanmedian = collections.namedtuple("nanmedian", ["values", "indices"])
return_types_mode = collections.namedtuple("mode", ["values", "indices"])


def _median_position(xp, a, dim, ignore_nan):
    """Sorted position of the median along ``dim`` (kept as a size-1 dim)."""
    n = a.shape[dim]
    nan_count = xp.isnan(a).sum(axis=dim, keepdims=True) if is_floating_array(a.dtype) else xp.zeros(
        a.shape[:dim] + (1,) + a.shape[dim + 1:], dtype="int64")
    if ignore_nan:
        return xp.maximum((n - nan_count - 1) // 2, 0)
    return xp.where(nan_count > 0, n - nan_count, (n - 1) // 2)  # NaN sorts last: the first NaN


def _median_dim_kernel(xp, a, dim, keepdim, ignore_nan):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    order = xp.argsort(a, axis=dim, kind="stable")
    indices = xp.take_along_axis(order, _median_position(xp, a, dim, ignore_nan), axis=dim)
    values = xp.take_along_axis(a, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices.astype("int64", copy=False)


def _median_all_kernel(xp, a, ignore_nan):
    flat = a.reshape(-1)
    if flat.size == 0:  # NaN, converted as C++ converts it (True for bool, INT_MIN for int64)
        with np.errstate(invalid="ignore"):
            return xp.asarray(np.asarray(np.nan).astype(a.dtype))
    values, _ = _median_dim_kernel(xp, flat, 0, False, ignore_nan)
    return values


def _select_backward(ctx, grad, grad_indices=None):
    """The gradient goes to the index each value came from."""
    from ember.native.factory import zeros

    (meta,) = ctx.input_meta
    (indices,) = ctx.saved_outputs_from(1)  # the values stay free to change in place, as in torch
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    if len(meta[0]) == 0:
        return (grad,)
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return (zeros(meta[0], dtype=grad.dtype, device=grad.device).scatter(dim, indices, grad),)


def _evenly_distributed_backward(ctx, grad):
    """Shared among the elements equal to the result (NaN counts as equal to NaN)."""
    (x,) = ctx.saved_inputs
    (y,) = ctx.saved_outputs
    mask = (x == y) | (x.isnan() & y.isnan())
    return (mask * (grad / mask.sum()),)


MEDIAN_DIM = Op("aten::median.dim", _median_dim_kernel, _select_backward, promote=NONE, save="outputs",
                num_outputs=2, backward_name="MedianBackward1")
MEDIAN = Op("aten::median", _median_all_kernel, _evenly_distributed_backward, promote=NONE, save="both",
            backward_name="MedianBackward0")
NANMEDIAN_DIM = Op("aten::nanmedian.dim", _median_dim_kernel, _select_backward, promote=NONE, save="outputs",
                   num_outputs=2, backward_name="NanmedianBackward1")
NANMEDIAN = Op("aten::nanmedian", _median_all_kernel, _evenly_distributed_backward, promote=NONE, save="both",
               backward_name="NanmedianBackward0")


def _check_dtype(input, kernel_name):
    # torch reaches the kernel (and its dtype dispatch) only for a non-empty input
    if input.dtype is dtypes.bool_ and input.numel():
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for 'Bool'")


def _check_dim(input, dim, name):
    dim = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    return dim if input.ndim else 0


def median(input, dim=None, keepdim=False):
    """The lower median of all elements, or ``(values, indices)`` along ``dim``.

    >>> import ember
    >>> ember.tensor([3., 1., 2., 4.]).median()
    tensor(2.)
    >>> ember.tensor([[3., 1., 2.], [6., 5., 4.]]).median(1)
    median(values=tensor([2., 5.]), indices=tensor([2, 1]))
    """
    _check_dtype(input, "median_cpu")
    if dim is None:
        return MEDIAN(input, ignore_nan=False)
    dim = _check_dim(input, dim, "median")
    return return_types_median(*MEDIAN_DIM(input, dim=dim, keepdim=keepdim, ignore_nan=False))


def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` of the non-NaN elements (NaN only where a line is all NaN).

    >>> import ember
    >>> ember.tensor([1., float("nan"), 3., 2.]).nanmedian()
    tensor(2.)
    """
    _check_dtype(input, "nanmedian_cpu")
    if dim is None:
        return NANMEDIAN(input, ignore_nan=True)
    dim = _check_dim(input, dim, "nanmedian")
    return return_types_nanmedian(*NANMEDIAN_DIM(input, dim=dim, keepdim=keepdim, ignore_nan=True))


def _mode_of_line(xp, line):
    # NOTE [ mode follows std::sort ] in introsort.py: the value is the smallest of the
    # most frequent, the index the one PyTorch's std::sort leaves last among them. A
    # short line without NaN is sorted stably (its last occurrence), and so is a value
    # that occurs once; anything else replays the sort.
    has_nan = line.dtype.kind in "fc" and bool(xp.isnan(line).any())
    uniques, counts = xp.unique(line, return_counts=True)
    if not has_nan and (line.size <= SMALL or int(counts.max()) == 1):
        value = uniques[int(xp.argmax(counts))]
        return value, int(xp.flatnonzero(line == value)[-1])
    return mode_of_line(line.tolist())


def _mode_kernel(xp, a, dim, keepdim):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    lines = xp.moveaxis(a, dim, -1)
    flat = lines.reshape(-1, lines.shape[-1])
    values = xp.empty(flat.shape[0], dtype=a.dtype)
    indices = xp.empty(flat.shape[0], dtype="int64")
    for row in range(flat.shape[0]):
        values[row], indices[row] = _mode_of_line(xp, flat[row])
    shape = lines.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = xp.expand_dims(values, dim), xp.expand_dims(indices, dim)
    return values, indices


MODE = Op("aten::mode", _mode_kernel, _select_backward, promote=NONE, save="outputs", num_outputs=2)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones)
    and the index of one occurrence, PyTorch's (NOTE [ mode follows std::sort ]; the
    last one in lines of at most 16 values).

    >>> import ember
    >>> ember.tensor([3., 1., 3., 1., 2.]).mode()
    mode(values=tensor(1.), indices=tensor(3))
    """
    dim = _check_dim(input, dim, "mode")
    return return_types_mode(*MODE(input, dim=dim, keepdim=keepdim))
