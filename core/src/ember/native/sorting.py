"""Sorting and selection: ``sort argsort msort topk kthvalue``.

PyTorch counterpart: aten/src/ATen/native/Sorting.cpp, TopKImpl.h and the ``sort``
/ ``topk`` / ``kthvalue`` entries of derivatives.yaml (v2.13).

NaN counts as larger than every number, so it comes last ascending and first
descending, and -0.0 equals 0.0, as in PyTorch. ``sort(stable=True)`` keeps equal
elements in their original order, ascending and descending alike; the default sort,
``topk`` and ``kthvalue`` leave them in the order PyTorch's CPU kernels do (NOTE [ The
order of ties ], NOTE [ kthvalue's ties ]). The gradient of every op here flows back to
the positions the selected values came from.
"""

import collections

import numpy as np

from ember.dispatcher import NONE, Op
from ember.dtypes import is_floating_array
from ember.native.support import std_sort
from ember.tensor import _wrap_dim

# NOTE [ The order of ties ]
# PyTorch's CPU sort with stable=False sorts each line's (value, index) pairs with
# ``std::sort`` and a comparator that puts NaN above every number; its topk fills a
# vector of pairs and calls ``std::partial_sort`` (when k * 64 <= n) or
# ``std::nth_element`` followed, for sorted=True, by ``std::sort`` of the first k - 1.
# Neither is stable, so the indices of equal values come out in whatever order those
# algorithms leave them (libstdc++'s: NOTE [ Replaying libstdc++'s sorts ] in
# native/support/std_sort.py). ember sorts stably with NumPy first: a line whose sorted
# values have no two equal neighbours has only one order, and a line of at most 16 values
# is only insertion-sorted by std::sort, which is stable; only the other lines are
# replayed, in Python, on dense integer ranks of the values. torch sorts a 1-d integer
# tensor of 32768 values or more ascending with fbgemm's radix sort instead, which is
# stable. topk's sorted=False order is replayed on every line (it is not sorted).
RADIX_SORT_MIN = 32768  # at::internal::GRAIN_SIZE


def comparison_ranks(values, descending=False):
    """Dense integer ranks of an array, NaN above every number (-0.0 and 0.0 one rank),
    negated for a descending order: keys whose ``<`` is PyTorch's sort comparator."""
    values = np.asarray(values)
    nan = np.isnan(values) if is_floating_array(values.dtype) else np.zeros(values.shape, dtype=bool)
    _, rank = np.unique(np.where(nan, 0, values), return_inverse=True)
    rank = rank.reshape(values.shape).astype(np.int64)
    rank[nan] = rank.max(initial=0) + 1
    return -rank if descending else rank


def std_sort_lines(keys, order):
    """Replay ``std::sort`` on each row of ``keys`` (2-d ranks), starting from each row of
    ``order`` (the positions, as a list of lists), in place."""
    for line_keys, line in zip(keys, order):
        std_sort.sort(line_keys, line, 0, len(line))


def topk_order(keys, k, sorted=True):
    """The positions of one line's ``keys`` (a list) in the order torch's topk kernel
    leaves them, its ``k`` picks first (NOTE [ The order of ties ])."""
    n = len(keys)
    order = list(range(n))
    if k * 64 <= n:
        std_sort.partial_sort(keys, order, 0, k, n)
    else:
        std_sort.nth_element(keys, order, 0, k - 1, n)
        if sorted:
            std_sort.sort(keys, order, 0, k - 1)
    return order

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


def _torch_order(xp, a, dim, descending, indices):
    """``indices`` (a stable order) with the lines that have ties reordered as PyTorch's
    unstable CPU sort leaves them (NOTE [ The order of ties ])."""
    n = a.shape[dim]
    radix = a.ndim == 1 and not descending and n >= RADIX_SORT_MIN and a.dtype.kind in "iu"
    if n <= std_sort.SMALL or radix or xp is not np:
        return indices
    values = np.moveaxis(a, dim, -1).reshape(-1, n)
    order = np.moveaxis(indices, dim, -1).reshape(-1, n)
    ordered = np.take_along_axis(values, order, axis=1)
    tied = ordered[:, 1:] == ordered[:, :-1]
    if is_floating_array(ordered.dtype):
        tied |= np.isnan(ordered[:, 1:]) & np.isnan(ordered[:, :-1])
    lines = np.flatnonzero(tied.any(axis=1))
    if lines.size == 0:
        return indices
    keys = comparison_ranks(values[lines], descending).tolist()
    replayed = [list(range(n)) for _ in range(lines.size)]
    std_sort_lines(keys, replayed)
    order = order.copy()
    order[lines] = replayed
    moved = np.moveaxis(indices, dim, -1).shape
    return np.moveaxis(order.reshape(moved), -1, dim)


def _sort_kernel(xp, a, dim, descending, stable=False):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    indices = _stable_argsort(xp, a, dim, descending)
    if not stable:
        indices = _torch_order(xp, a, dim, descending, indices)
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
    indices)`` named tuple; NaN sorts as the largest value. ``stable=True`` keeps equal
    values in their original order; the default leaves them as PyTorch's CPU sort does
    (NOTE [ The order of ties ]).

    >>> import ember
    >>> ember.tensor([3., 1., 2., 1.]).sort(descending=True)
    sort(values=tensor([3., 2., 1., 1.]), indices=tensor([0, 2, 1, 3]))
    """
    dim = _wrap_dim(dim, input.ndim)
    if stable is None:
        stable = False
    if stable:
        return return_types_sort(*SORT(input, dim=dim, descending=descending, stable=True))
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
    if input.ndim == 0:
        values, indices = sort(input, dim, descending=largest)
        return return_types_topk(values, indices)
    return return_types_topk(*TOPK(input, k=k, dim=dim, largest=bool(largest), sorted=bool(sorted)))


def _topk_kernel(xp, a, k, dim, largest, sorted):
    indices = _topk_indices(xp, a, k, dim, largest, sorted)
    return xp.ascontiguousarray(xp.take_along_axis(a, indices, axis=dim)), indices


def _topk_indices(xp, a, k, dim, largest, sorted):
    """The indices torch's topk returns along ``dim`` (NOTE [ The order of ties ])."""
    n = a.shape[dim]
    stable = _stable_argsort(xp, a, dim, largest)
    picked = xp.take(stable, xp.arange(k), axis=dim)
    if xp is not np or k == 0:
        return xp.ascontiguousarray(picked.astype("int64", copy=False))
    values = np.moveaxis(a, dim, -1).reshape(-1, n)
    order = np.moveaxis(stable, dim, -1).reshape(-1, n)
    ordered = np.take_along_axis(values, order, axis=1)
    # the stable answer is torch's unless equal values meet within the first k + 1
    # (or the order is not sorted at all)
    head = ordered[:, :min(k + 1, n)]
    tied = head[:, 1:] == head[:, :-1]
    if is_floating_array(head.dtype):
        tied |= np.isnan(head[:, 1:]) & np.isnan(head[:, :-1])
    lines = np.arange(values.shape[0]) if not sorted and k * 64 > n else np.flatnonzero(tied.any(axis=1))
    result = order[:, :k].copy()
    if lines.size:
        keys = comparison_ranks(values[lines], largest).tolist()
        result[lines] = [topk_order(line, k, sorted)[:k] for line in keys]
    shape = np.moveaxis(stable, dim, -1).shape[:-1] + (k,)
    return np.ascontiguousarray(np.moveaxis(result.reshape(shape), -1, dim).astype(np.int64))


# the gradient of each picked value goes back where it came from, as sort's
TOPK = Op("aten::topk", _topk_kernel, _sort_backward, promote=NONE, save="outputs", num_outputs=2)


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
