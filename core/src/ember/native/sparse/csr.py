"""Compressed sparse rows (CSR), as far as the ops torch's operator database checks:
``to_sparse_csr``, ``crow_indices``/``col_indices``/``values``, ``to_dense``,
``sparse.sampled_addmm`` and ``sparse.mm`` with a reduction.

PyTorch counterpart: aten/src/ATen/SparseCsrTensorImpl.h, aten/src/ATen/native/sparse/
SparseCsrTensor.cpp, SparseBlasImpl.cpp (``sampled_addmm``) and SparseCsrTensorMath.cpp
(``_sparse_mm_reduce_impl``) (v2.13).

A 2-D CSR matrix lists its entries row by row: ``col_indices[k]`` and ``values[k]`` are
entry ``k``'s column and value, and row ``r``'s entries are ``k`` in
``crow_indices[r] : crow_indices[r + 1]``. ember keeps the same entries as a coalesced
COO tensor (row-major order is CSR's order) and derives ``crow_indices`` from its rows,
so every CSR op here is the COO op on those entries.
"""

import warnings

import numpy as np

from ember.layout import sparse_csr
from ember.native.sparse.sparse_tensor import (
    SparseTensor,
    _host_indices,
    _int64_tensor,
    coalesce,
    init_tensor_fields,
    to_sparse,
)
from ember.tensor import Tensor


class SparseCsrTensor(Tensor):
    """A 2-D sparse CSR matrix (``layout == ember.sparse_csr``)."""

    is_sparse_csr = True
    layout = sparse_csr

    def __init__(self, coo):
        init_tensor_fields(self, coo.device)
        self._coo = coo

    _data = SparseTensor._data
    dtype = property(lambda self: self._coo.dtype)
    shape = property(lambda self: self._coo.shape)
    ndim = property(lambda self: self._coo.ndim)
    requires_grad = property(lambda self: self._coo.requires_grad)
    grad_fn = property(lambda self: self._coo.grad_fn)

    def size(self, dim=None):
        return self._coo.size(dim)

    def dim(self):
        return self._coo.ndim

    def numel(self):
        return self._coo.numel()

    def _nnz(self):
        return self._coo._nnz()

    def crow_indices(self):
        rows = _host_indices(self._coo)[0]
        counts = np.bincount(rows, minlength=self.shape[0])
        return _int64_tensor(np.concatenate([[0], np.cumsum(counts)]), self._device)

    def col_indices(self):
        return self._coo._sparse_indices[1]

    def values(self):
        return self._coo._sparse_values

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self._coo.to_dense(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return self if layout is sparse_csr else self._coo

    def detach(self):
        return SparseCsrTensor(self._coo.detach())

    def __repr__(self, *, tensor_contents=None):
        return (f"tensor(crow_indices={self.crow_indices()!r},\n       col_indices={self.col_indices()!r},\n"
                f"       values={self.values()!r}, size={tuple(self.shape)}, nnz={self._nnz()}, "
                f"layout={self.layout})")


def to_sparse_csr(input, dense_dim=None):
    """A 2-D dense (or COO) matrix as CSR."""
    if input.is_sparse_csr:
        return input
    if input.ndim != 2:
        raise RuntimeError(f"to_sparse_csr: ember supports 2-D matrices only, got {input.ndim}-D")
    coo = coalesce(input) if input.is_sparse else to_sparse(input)
    return SparseCsrTensor(coo)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None):
    """A CSR matrix from its three parts (rows expanded from ``crow_indices``)."""
    from ember.native.factory import tensor
    from ember.native.sparse.sparse_tensor import sparse_coo_tensor

    crow = np.asarray(crow_indices._host() if isinstance(crow_indices, Tensor) else crow_indices, dtype=np.int64)
    cols = np.asarray(col_indices._host() if isinstance(col_indices, Tensor) else col_indices, dtype=np.int64)
    rows = np.repeat(np.arange(crow.size - 1), np.diff(crow))
    if size is None:
        size = (crow.size - 1, int(cols.max()) + 1 if cols.size else 0)
    values = values if isinstance(values, Tensor) else tensor(values, dtype=dtype, device=device)
    coo = sparse_coo_tensor(np.stack([rows, cols]), values, size, dtype=dtype, device=device,
                            requires_grad=requires_grad, is_coalesced=True)
    return SparseCsrTensor(coo)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * input + alpha * (mat1 @ mat2)`` computed only at ``input``'s entries: a
    sparse result with ``input``'s pattern (``ember.sparse.sampled_addmm``).

    >>> import ember
    >>> a = ember.eye(2).to_sparse_csr()
    >>> ember.sparse.sampled_addmm(a, ember.ones(2, 3), ember.ones(3, 2)).to_dense()
    tensor([[4., 0.],
            [0., 4.]])
    """
    if not input.is_sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected self to be sparse CSR, but got {input.layout}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    coo = input._coo
    indices = _host_indices(coo)
    rows, cols = (_int64_tensor(indices[d], mat1.device) for d in (0, 1))
    sampled = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(1)
    values = coo._sparse_values * beta + sampled * alpha if beta != 0 else sampled * alpha
    return SparseCsrTensor(SparseTensor(coo._sparse_indices, values, coo.shape, True))


_REDUCTIONS = ("sum", "mean", "amax", "amin")


def mm_reduce(input, other, reduce):
    """``sparse.mm(input, other, reduce)`` for a CSR ``input``: row ``r`` of the result
    reduces ``value * other[col]`` over row ``r``'s entries with ``reduce`` ("sum",
    "mean", "amax" or "amin"); a row with no entries is zero."""
    from ember.native.factory import zeros

    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, mean, amax or amin, got {reduce}")
    coo = input._coo if input.is_sparse_csr else coalesce(input)
    indices = _host_indices(coo)
    rows, cols = (_int64_tensor(indices[d], other.device) for d in (0, 1))
    products = coo._sparse_values.unsqueeze(1) * other.index_select(0, cols)
    out = zeros((coo.shape[0], other.shape[1]), dtype=other.dtype, device=other.device)
    if reduce in ("sum", "mean"):
        out = out.index_add(0, rows, products)
        if reduce == "mean":
            counts = np.maximum(np.bincount(indices[0], minlength=coo.shape[0]), 1)
            out = out / _counts_column(counts, out)
        return out
    with warnings.catch_warnings():  # index_reduce's "in beta" warning: torch's sparse.mm gives none
        warnings.simplefilter("ignore", UserWarning)
        return out.index_reduce(0, rows, products, reduce, include_self=False)


def _counts_column(counts, like):
    from ember.native.factory import tensor

    return tensor(counts.reshape(-1, 1), dtype=like.dtype, device=like.device)

