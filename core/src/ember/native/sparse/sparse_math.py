"""Arithmetic on sparse COO tensors: the matrix products graph networks use (``mm``,
``addmm``, ``spmm``, ``sparse @ dense``), ``sparse.sum``, addition and scaling.

PyTorch counterpart: aten/src/ATen/native/sparse/SparseTensorMath.cpp (``s_addmm_out_sparse_dense``,
``_sparse_sum``, ``add_out_sparse_cpu``, ``mul_sparse``) and SparseMatMul.cpp (v2.13).

Every product here is one gather, one multiply and one scatter-add over the entries:
``out[i] += value_k * dense[j]`` for each entry ``(i, j)``. The gather and scatter are
ember's ``index_select`` and ``index_add``, so autograd gives the dense operand and the
values their gradients (NOTE [ Sparse values carry the gradient ] in __init__.py).
"""

import numpy as np

from ember.native.sparse.sparse_tensor import SparseTensor, _host_indices, _int64_tensor, coalesce
from ember.tensor import Tensor, _wrap_dim

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _check_mm(sparse, dense):
    if sparse.sparse_dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError(f"mm: expected a 2-D sparse matrix with no dense dims, got sparse_dim "
                           f"{sparse.sparse_dim()} and dense_dim {sparse.dense_dim()}")
    if dense.ndim != 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(dense.ndim, 1)}, "
                         f"{max(dense.ndim, 1) - 1}], but got 1)")
    if dense.shape[0] != sparse.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {sparse.shape[1]}, got "
                           f"{dense.shape[0]}")
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE_NAMES.get(sparse.dtype.name, sparse.dtype.name)} but "
                           f"found {_TYPE_NAMES.get(dense.dtype.name, dense.dtype.name)}")


def _sparse_dense_mm(sparse, dense):
    """``sparse @ dense`` for a 2-D COO matrix and a dense matrix: ``out[i] += v * dense[j]``."""
    from ember.native.factory import zeros

    _check_mm(sparse, dense)
    indices = _host_indices(sparse)
    rows, cols = (_int64_tensor(indices[d], dense.device) for d in (0, 1))
    products = sparse._sparse_values.unsqueeze(1) * dense.index_select(0, cols)
    out = zeros((sparse.shape[0], dense.shape[1]), dtype=dense.dtype, device=dense.device)
    return out.index_add(0, rows, products)


def _sparse_sparse_mm(a, b):
    """``a @ b`` for two 2-D COO matrices, a coalesced COO result: every entry ``(i, k)``
    of ``a`` meets every entry ``(k, j)`` of ``b``; the products of one ``(i, j)`` add up."""
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    a, b = coalesce(a), coalesce(b)
    ia, ib = _host_indices(a), _host_indices(b)
    # b is coalesced, so its entries are sorted by row: row k's entries are one run.
    starts = np.searchsorted(ib[0], ia[1], side="left")
    ends = np.searchsorted(ib[0], ia[1], side="right")
    counts = ends - starts
    left = np.repeat(np.arange(ia.shape[1]), counts)
    right = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if counts.sum() else \
        np.zeros(0, dtype=np.int64)
    device = a.device
    values = (a._sparse_values.index_select(0, _int64_tensor(left, device))
              * b._sparse_values.index_select(0, _int64_tensor(right, device)))
    pairs = np.stack([ia[0][left], ib[1][right]]).astype(np.int64)
    product = SparseTensor(_int64_tensor(pairs, device), values, (a.shape[0], b.shape[1]), False)
    return coalesce(product)


def mm(mat1, mat2):
    """``mat1 @ mat2`` where ``mat1`` is a sparse COO matrix: a dense result for a dense
    ``mat2``, a sparse one for a sparse ``mat2`` (``ember.sparse.mm``, ``ember.spmm``).

    Gradients reach ``mat2`` and ``mat1``'s values (for a sparse leaf, a sparse gradient
    with its pattern, as torch's ``sparse.mm`` gives).

    >>> import ember
    >>> a = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> ember.sparse.mm(a, ember.ones(2, 1))
    tensor([[2.],
            [3.]])
    """
    if mat1.is_sparse and mat2.is_sparse:
        return _sparse_sparse_mm(mat1, mat2)
    if mat1.is_sparse:
        return _sparse_dense_mm(mat1, mat2)
    if mat2.is_sparse:  # dense @ sparse = (sparse^T @ dense^T)^T
        return _sparse_dense_mm(mat2.t(), mat1.t()).t()
    from ember.native.linalg.products import mm as dense_mm

    return dense_mm(mat1, mat2)


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (``ember.sparse.addmm``)."""
    product = mm(mat1, mat2)
    if input.is_sparse:
        input = input.to_dense()
    if beta == 0:
        return product * alpha
    return input * beta + product * alpha


def matmul(input, other):
    """``input @ other`` with a sparse operand: a 2-D product (``mm``), or a sparse matrix
    times a vector."""
    if other.ndim == 1 and input.is_sparse:
        return mm(input, other.unsqueeze(1)).squeeze(1)
    return mm(input, other)


def sum(input, dim=None, dtype=None):
    """``ember.sparse.sum``: the sum of all entries (a dense 0-d tensor), or over ``dim``
    (an int or a tuple): a sparse tensor over the sparse dims left, a dense one when every
    sparse dim is summed.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1., 2., 3.], (2, 3))
    >>> ember.sparse.sum(s, 1).to_dense()
    tensor([1., 5.])
    """
    if not input.is_sparse:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
    values = input._sparse_values if dtype is None else input._sparse_values.to(dtype)
    if dim is None:
        return values.sum()
    dims = sorted({_wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dim = input.sparse_dim()
    summed_sparse = [d for d in dims if d < sparse_dim]
    summed_dense = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if summed_dense:
        values = values.sum(summed_dense)
    kept = [d for d in range(sparse_dim) if d not in summed_sparse]
    dense_sizes = [s for d, s in enumerate(input.shape) if d >= sparse_dim and d not in dims]
    if not kept:
        return values.sum(0)
    indices = _host_indices(input)[kept]
    size = [input.shape[d] for d in kept] + dense_sizes
    return coalesce(SparseTensor(_int64_tensor(indices, input.device), values, size, False))


def add(input, other, *, alpha=1):
    """``input + alpha * other`` where either is sparse: sparse + sparse is sparse (the
    entries of both; merged when both are coalesced), dense + sparse is dense, and
    sparse + dense is refused, as torch refuses it."""
    if not isinstance(other, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if tuple(input.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(input.shape)} != "
                           f"{list(other.shape)}")
    if input.is_sparse and not other.is_sparse:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if not (input.is_sparse and other.is_sparse):
        return _dense(input) + _dense(other) * alpha if alpha != 1 else _dense(input) + _dense(other)
    from ember.native.shape.shape import cat

    other_values = other._sparse_values * alpha if alpha != 1 else other._sparse_values
    indices = cat([input._sparse_indices, other._sparse_indices], 1)
    values = cat([input._sparse_values, other_values], 0)
    out = SparseTensor(indices, values, input.shape, False)
    return coalesce(out) if input._is_coalesced and other._is_coalesced else out


def _dense(tensor):
    return tensor.to_dense() if tensor.is_sparse else tensor


def mul(input, other):
    """A sparse tensor times a number (or a 0-d tensor): its values scaled, the pattern kept."""
    if isinstance(other, (int, float, complex)) or (not other.is_sparse and other.ndim == 0):
        return SparseTensor(input._sparse_indices, input._sparse_values * other, input.shape, input._is_coalesced)
    if other.is_sparse:
        # Equal patterns multiply entrywise; anything else goes through the dense product.
        return (input.to_dense() * other.to_dense()).to_sparse(input.sparse_dim())
    return (input.to_dense() * other).to_sparse(input.sparse_dim())

