"""Binary search in sorted boundaries: ``searchsorted`` (where each value would be
inserted into a sorted sequence to keep it sorted) and ``bucketize`` (which bucket,
between consecutive boundaries, each value falls into).

PyTorch counterpart: aten/src/ATen/native/Bucketization.cpp and
BucketizationUtils.h (the checks) (v2.13).

``side="left"`` (``right=False``) returns the first position ``i`` with
``value <= boundaries[i]``; ``"right"`` the first with ``value < boundaries[i]``.
``boundaries`` may be 1-d (one sequence for all values) or carry the values' leading
dims (one sequence per row, searched row by row). ``sorter`` gives the order that
sorts an unsorted ``boundaries`` (as from ``argsort``). Integer results, not
differentiable.
"""

import math

from ember import dtypes
from ember.dispatcher import Op
from ember.tensor import Tensor


def _searchsorted_kernel(xp, boundaries, values, sorter, side, out_int32):
    index_dtype = "int32" if out_int32 else "int64"
    if boundaries.ndim == 1:
        out = xp.searchsorted(boundaries, values, side=side, sorter=sorter)
        return xp.asarray(out).astype(index_dtype)
    # one sorted sequence per row: search each row's values in it
    row_count = math.prod(boundaries.shape[:-1])
    rows = boundaries.reshape(row_count, boundaries.shape[-1])
    row_values = values.reshape(row_count, values.shape[-1])
    row_sorters = None if sorter is None else sorter.reshape(rows.shape)
    out = xp.empty(row_values.shape, dtype=index_dtype)
    for r in range(rows.shape[0]):
        out[r] = xp.searchsorted(rows[r], row_values[r], side=side,
                                 sorter=None if row_sorters is None else row_sorters[r])
    return out.reshape(values.shape)


SEARCHSORTED = Op("aten::searchsorted", _searchsorted_kernel, None)


def _side(side, right):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side is not None and right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side or ("right" if right else "left")


def _check(boundaries, values, sorter):
    if boundaries.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.ndim > 1 and tuple(boundaries.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(values.shape)}")
    if sorter is None:
        return
    if sorter.dtype is not dtypes.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{dtypes.SCALAR_TYPE_NAMES[sorter.dtype.name]}")
    if tuple(sorter.shape) != tuple(boundaries.shape):
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
    if sorter.numel() and (bool((sorter < 0).any()) or bool((sorter >= boundaries.shape[-1]).any())):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value of ``input``, the index at which inserting it into
    ``sorted_sequence`` (along its last dim) keeps that sorted.

    >>> import ember
    >>> ember.searchsorted(ember.tensor([1, 3, 5, 7]), ember.tensor([3, 6]))
    tensor([1, 3])
    >>> ember.searchsorted(ember.tensor([1, 3, 5, 7]), ember.tensor([3, 6]), right=True)
    tensor([2, 3])
    """
    side = _side(side, right)
    if not isinstance(input, Tensor):  # a scalar value: a 0-d result
        from ember.native.factory import tensor

        input = tensor(input, device=sorted_sequence.device)
    _check(sorted_sequence, input, sorter)
    return SEARCHSORTED(sorted_sequence, input, sorter, side=side, out_int32=bool(out_int32))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value: ``i`` with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``).

    >>> import ember
    >>> ember.bucketize(ember.tensor([0.5, 3., 9.]), ember.tensor([1., 3., 5.]))
    tensor([0, 1, 3])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
