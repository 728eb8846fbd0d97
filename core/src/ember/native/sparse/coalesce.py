"""The index bookkeeping of sparse COO tensors, in plain NumPy: sort the entries into
row-major order and merge the duplicates.

PyTorch counterpart: aten/src/ATen/native/sparse/SparseTensor.cpp (``_coalesce_sparse_cpu``,
``flatten_indices``) (v2.13).

These functions read and return int64 index arrays only; the values are summed by the
caller with ember's ``index_add`` so autograd records it (NOTE [ Sparse values carry the
gradient ] in ember/native/sparse/__init__.py).
"""

import numpy as np


def flatten_indices(indices, sizes):
    """The row-major position of each entry in a tensor of shape ``sizes``:
    ``indices [sparse_dim, nnz] -> [nnz]``."""
    strides = np.ones(len(sizes), dtype=np.int64)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * sizes[d + 1]
    return (indices * strides[:, None]).sum(axis=0) if len(sizes) else np.zeros(indices.shape[1], np.int64)


def coalesce_plan(indices):
    """How to coalesce: ``(unique, inverse)``. ``unique [sparse_dim, n]`` holds
    each distinct index once, in row-major order, and entry ``i`` is merged into
    ``unique[:, inverse[i]]``.

    The entries are sorted with ``np.lexsort`` (last key first: the first dim is the
    most significant), then a new group starts wherever an index differs from the one
    before it.
    """
    sparse_dim, nnz = indices.shape
    if nnz == 0:
        return indices.copy(), np.zeros(0, dtype=np.int64)
    order = np.lexsort(indices[::-1]) if sparse_dim else np.zeros(nnz, dtype=np.int64)
    ordered = indices[:, order]
    starts = np.ones(nnz, dtype=bool)
    starts[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)
    group_of_sorted = np.cumsum(starts) - 1
    inverse = np.empty(nnz, dtype=np.int64)
    inverse[order] = group_of_sorted
    return ordered[:, starts], inverse


def is_sorted_and_unique(indices):
    """Whether the entries are already in row-major order with no index twice (a
    coalesced tensor's invariant)."""
    if indices.shape[1] < 2:
        return True
    unique, inverse = coalesce_plan(indices)
    return unique.shape[1] == indices.shape[1] and bool((inverse == np.arange(inverse.size)).all())


def groups_except(indices, dim):
    """For softmax along sparse dim ``dim``: a group id per entry, entries sharing every
    other sparse index in one group; and the number of groups."""
    others = np.delete(indices, dim, axis=0)
    if others.shape[0] == 0:
        return np.zeros(indices.shape[1], dtype=np.int64), 1 if indices.shape[1] else 0
    unique, inverse = coalesce_plan(others)
    return inverse, unique.shape[1]
