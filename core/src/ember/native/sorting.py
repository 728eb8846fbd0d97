"""Sorting and selection: ``sort argsort topk kthvalue msort unique``.

PyTorch counterpart: aten/src/ATen/native/Sorting.cpp, TensorTopK and Unique.cpp (v2.13).
"""

import collections

from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim

return_types_sort = collections.namedtuple("sort", ["values", "indices"])
return_types_topk = collections.namedtuple("topk", ["values", "indices"])


def _sort_kernel(xp, a, dim, descending, stable):
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype="int64")
    # Always a stable sort: equal elements keep their order, as PyTorch's stable=True.
    key = _descending_key(xp, a) if descending else a
    idx = xp.argsort(key, axis=dim, kind="stable")
    return xp.take_along_axis(a, idx, axis=dim), idx.astype("int64", copy=False)


def _descending_key(xp, a):
    if a.dtype.kind == "f":
        # NaN sorts first in descending order (it is the largest), as in PyTorch.
        key = -a
        return xp.where(xp.isnan(a), -xp.inf, key)
    if a.dtype.kind == "u":
        return -(a.astype("int64"))
    return -(a.astype("int64")) if a.dtype.itemsize < 8 else _int64_desc(xp, a)


def _int64_desc(xp, a):
    # -x overflows for the smallest int64; invert the bits instead (order-reversing).
    return xp.invert(a)


def _sort_backward(ctx, grad, grad_indices=None):
    from ember.native.factory import zeros
    from ember.native.indexing import scatter

    (meta,) = ctx.input_meta
    _, indices = ctx.saved_outputs
    if len(meta[0]) == 0:
        return (grad,)
    return (scatter(zeros(meta[0], dtype=grad.dtype, device=grad.device), ctx.attrs["dim"], indices, grad),)


SORT = Op("aten::sort", _sort_kernel, _sort_backward, promote=NONE, save="outputs", num_outputs=2)


def sort(input, dim=-1, descending=False, stable=False):
    """Sorted values and their original indices along ``dim`` (ties keep order)."""
    dim = _wrap_dim(dim, input.ndim)
    return return_types_sort(*SORT(input, dim=dim, descending=descending, stable=stable))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = sort(input, dim, descending=largest)
    return return_types_topk(values.narrow(dim, 0, k) if input.ndim else values,
                             indices.narrow(dim, 0, k) if input.ndim else indices)


def kthvalue(input, k, dim=-1, keepdim=False):
    dim = _wrap_dim(dim, input.ndim)
    values, indices = sort(input, dim)
    v, i = values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1)
    if not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return collections.namedtuple("kthvalue", ["values", "indices"])(v, i)
