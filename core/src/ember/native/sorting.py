"""Sorting and selection: ``sort argsort msort topk kthvalue``.

PyTorch counterpart: aten/src/ATen/native/Sorting.cpp, TopKImpl.h and the ``sort``
/ ``topk`` / ``kthvalue`` entries of derivatives.yaml (v2.13).

Every sort here is stable: equal elements keep their original order, in ascending
and in descending order alike (PyTorch's ``stable=True``; its default sort gives the
same values, but may order the indices of ties differently). NaN counts as larger
than every number, so it comes last ascending and first descending, as in PyTorch.
``topk`` selects from the sorted order and ``kthvalue`` replays PyTorch's quickselect
(NOTE [ kthvalue's ties ]); the gradient of every op here flows back to the positions
the selected values came from.
"""

import collections

from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim

return_types_sort = collections.namedtuple("sort", ["values", "indices"])
return_types_topk = collections.namedtuple("topk", ["values", "indices"])
return_types_kthvalue = collections.namedtuple("kthvalue", ["values", "indices"])


def _stable_argsort(xp, a, dim, descending):
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")
    # A stable *descending* order without negating (which overflows the smallest
    # integer, cannot negate bool and would put NaN last): sort the reversed line
    # ascending, then reverse the result and map the positions back. Ties end up in
    # increasing original order, NaN (last ascending) first.
    reversed_order = xp.argsort(xp.flip(a, axis=dim), axis=dim, kind="stable")
    return (a.shape[dim] - 1) - xp.flip(reversed_order, axis=dim)


def _sort_kernel(xp, a, dim, descending):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    indices = _stable_argsort(xp, a, dim, descending)
    values, indices = xp.take_along_axis(a, indices, axis=dim), indices.astype("int64", copy=False)
    # PyTorch's sort writes into empty_like(input): the input's layout (NOTE [ preserve_format ]).
    from ember.memory_format import contiguous_strides, preserved_strides, with_layout
    from ember.native.shape.views import element_strides

    strides = preserved_strides(a.shape, element_strides(a)) if a.size > 1 else contiguous_strides(a.shape)
    if strides != contiguous_strides(a.shape):
        values, indices = with_layout(xp, values, strides), with_layout(xp, indices, strides)
    elif not values.flags.c_contiguous or not indices.flags.c_contiguous:
        values, indices = xp.ascontiguousarray(values), xp.ascontiguousarray(indices)
    return values, indices


def _sort_backward(ctx, grad, grad_indices=None):
    # Each sorted value came from input[indices]: send its gradient back there.
    from ember.native.factory import zeros
    from ember.native.indexing.indexing import scatter

    (meta,) = ctx.input_meta
    (indices,) = ctx.saved_outputs_from(1)  # the values stay free to change in place, as in torch
    if len(meta[0]) == 0:
        return (grad,)
    return (scatter(zeros(meta[0], dtype=grad.dtype, device=grad.device), ctx.attrs["dim"], indices, grad),)


SORT = Op("aten::sort", _sort_kernel, _sort_backward, promote=NONE, save="outputs", num_outputs=2)


def sort(input, dim=-1, descending=False, *, stable=False):
    """Sorted values along ``dim`` and the indices they came from, a ``(values,
    indices)`` named tuple. Always stable (``stable`` is accepted for PyTorch's
    signature); NaN sorts as the largest value.

    >>> import ember
    >>> ember.tensor([3., 1., 2., 1.]).sort(descending=True)
    sort(values=tensor([3., 2., 1., 1.]), indices=tensor([0, 2, 1, 3]))
    """
    dim = _wrap_dim(dim, input.ndim)
    return return_types_sort(*SORT(input, dim=dim, descending=descending))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim``: ``sort(...).indices``."""
    return sort(input, dim, descending, stable=stable).indices


def msort(input):
    """Values sorted along dim 0."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their
    indices, a ``(values, indices)`` named tuple, in sorted order.

    >>> import ember
    >>> ember.tensor([1., 5., 3., 4.]).topk(2)
    topk(values=tensor([5., 4.]), indices=tensor([1, 3]))
    """
    dim = _wrap_dim(dim, input.ndim)
    if input.dtype.name == "bool":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = sort(input, dim, descending=largest)
    if input.ndim:
        # New tensors, not views of the sorted ones (PyTorch's topk allocates its outputs).
        from ember.memory_format import contiguous_format

        values = values.narrow(dim, 0, k).clone(memory_format=contiguous_format)
        indices = indices.narrow(dim, 0, k).clone(memory_format=contiguous_format)
    return return_types_topk(values, indices)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1) and its index,
    a ``(values, indices)`` named tuple.

    >>> import ember
    >>> ember.tensor([4., 1., 3.]).kthvalue(2)
    kthvalue(values=tensor(3.), indices=tensor(2))
    """
    from ember.native.support._inplace import _type_name

    dim = _wrap_dim(dim, input.ndim)
    if input.dtype.name == "bool" and input.ndim:  # a 0-d input never reaches the kernel, as in PyTorch
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for '{_type_name(input.dtype)}'")
    size = input.shape[dim] if input.ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if input.ndim == 0:
        return return_types_kthvalue(input.clone(), input.new_zeros((), dtype=_int64()))
    index = KTHVALUE_INDEX(input, k=k, dim=dim)  # (..., 1, ...): torch's pick among ties
    from ember.native.indexing.indexing import gather

    values = gather(input, dim, index)
    if not keepdim:  # new tensors, as PyTorch's, not views of the keepdim ones
        values, index = values.squeeze(dim).clone(), index.squeeze(dim).clone()
    return return_types_kthvalue(values, index)


def _int64():
    from ember import dtypes

    return dtypes.int64


# NOTE [ kthvalue's ties ]
# PyTorch's kthvalue runs a quickselect (median-of-three pivot, Hoare partition) on a
# copy of each line with the indices swapped alongside, and returns the index that
# lands at position k - 1. Among equal values that is not the first nor the last
# occurrence but whichever the partitioning leaves there ([1, 1, 1] gives 1, 0, 2 for
# k = 1, 2, 3), so ember replays the same quickselect, step for step, on the host.


def _greater_or_nan(x, y):
    # NaN counts as larger than any number, as in the sort order.
    return (x != x and y == y) or x > y


def _quickselect_index(line, k):
    """The original index PyTorch's quickselect leaves at position ``k`` of ``line``."""
    values = list(line)
    order = list(range(len(values)))

    def swap(i, j):
        values[i], values[j] = values[j], values[i]
        order[i], order[j] = order[j], order[i]

    low, high = 0, len(values) - 1
    while True:
        if high <= low:
            return order[k]
        if high == low + 1:
            if _greater_or_nan(values[low], values[high]):
                swap(low, high)
            return order[k]
        middle = low + (high - low) // 2
        swap(middle, low + 1)
        if _greater_or_nan(values[low + 1], values[high]):
            swap(low + 1, high)
        if _greater_or_nan(values[low], values[high]):
            swap(low, high)
        if _greater_or_nan(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, values[low]
        while True:
            i += 1
            while _greater_or_nan(pivot, values[i]):
                i += 1
            j -= 1
            while _greater_or_nan(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1


def _kthvalue_index_kernel(xp, a, k, dim):
    import numpy as np

    host = np.moveaxis(np.asarray(a.get() if hasattr(a, "get") else a), dim, -1)
    lines = host.reshape(-1, host.shape[-1]).tolist()
    picked = np.array([_quickselect_index(line, k - 1) for line in lines], dtype=np.int64)
    picked = np.moveaxis(picked.reshape(host.shape[:-1] + (1,)), -1, dim)
    return xp.asarray(np.ascontiguousarray(picked))


KTHVALUE_INDEX = Op("aten::_kthvalue_index", _kthvalue_index_kernel, None, promote=NONE)
