"""The sparse COO tensor: ``indices`` and ``values`` plus a size, and the conversions
``sparse_coo_tensor``, ``to_sparse``, ``to_dense`` and ``coalesce``.

PyTorch counterpart: aten/src/ATen/SparseTensorImpl.h (the fields), aten/src/ATen/native/
sparse/SparseTensor.cpp (``sparse_coo_tensor``, ``coalesce``, ``sparse_to_dense``,
``dense_to_sparse``) and torch/_tensor.py (v2.13).

A COO ("coordinate") tensor of shape ``size`` stores ``nnz`` specified entries:
``indices`` is int64 ``[sparse_dim, nnz]``, column ``k`` the position of entry ``k`` in
the first ``sparse_dim`` dims; ``values`` is ``[nnz, *size[sparse_dim:]]``, entry
``k``'s value, a dense block when the tensor is *hybrid* (``dense_dim > 0``). Every
position not listed is zero. The same position may be listed twice (the values add up);
a *coalesced* tensor lists each position once, in row-major order.

The class is an ``ember.Tensor`` (``isinstance`` holds, as in torch) with no backend
array: a dense op that reaches for one raises torch's NotImplementedError for the
'SparseCPU' backend. Its gradient lives on its values (NOTE [ Sparse values carry the
gradient ] in ember/native/sparse/__init__.py).
"""

import numpy as np

from ember import dtypes
from ember.layout import sparse_coo, strided
from ember.native.sparse.coalesce import coalesce_plan, flatten_indices
from ember.tensor import Size, Tensor, _wrap_dim


def _no_dense_kernel():
    raise NotImplementedError("Could not run this operator with arguments from the 'SparseCPU' backend: "
                              "a sparse_coo tensor has no strided data (call .to_dense() first)")


def init_tensor_fields(tensor, device):
    """The slots every ``Tensor`` sets, for a tensor without a backend array (its
    autograd state is read from its values, so these stay at their defaults)."""
    tensor._device = device
    tensor._version_counter = [0]
    tensor._output_nr = 0
    tensor._requires_grad = False
    tensor._grad_fn = None


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout == ember.sparse_coo``)."""

    is_sparse = True
    layout = sparse_coo

    def __init__(self, indices, values, size, coalesced):
        init_tensor_fields(self, values.device)
        self._sparse_indices = indices
        self._sparse_values = values
        self._sparse_size = Size(size)
        self._is_coalesced = bool(coalesced)

    # A sparse tensor has no backend array: every dense kernel stops here.
    _data = property(lambda self: _no_dense_kernel())

    # --- metadata -----------------------------------------------------------------
    @property
    def shape(self):
        return self._sparse_size

    def size(self, dim=None):
        return self._sparse_size if dim is None else self._sparse_size[_wrap_dim(dim, len(self._sparse_size))]

    @property
    def dtype(self):
        return self._sparse_values.dtype

    @property
    def ndim(self):
        return len(self._sparse_size)

    def dim(self):
        return len(self._sparse_size)

    ndimension = dim

    def numel(self):
        return self._sparse_size.numel()

    def element_size(self):
        return self._sparse_values.element_size()

    def is_floating_point(self):
        return self._sparse_values.is_floating_point()

    def is_complex(self):
        return self._sparse_values.is_complex()

    def sparse_dim(self):
        return self._sparse_indices.shape[0]

    def dense_dim(self):
        return self._sparse_values.ndim - 1

    def _nnz(self):
        return self._sparse_indices.shape[1]

    def is_coalesced(self):
        return self._is_coalesced

    def _coalesced_(self, coalesced):
        self._is_coalesced = bool(coalesced)
        return self

    def is_contiguous(self, memory_format=None):
        return False

    def stride(self, dim=None):
        raise RuntimeError("Sparse tensors do not have strides")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __len__(self):
        if not self._sparse_size:
            raise TypeError("len() of a 0-d tensor")
        return self._sparse_size[0]

    # --- the parts ------------------------------------------------------------------
    def _indices(self):
        return self._sparse_indices

    def _values(self):
        return self._sparse_values

    def indices(self):
        if not self._is_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sparse_indices

    def values(self):
        if not self._is_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sparse_values

    # --- autograd: read from the values (NOTE [ Sparse values carry the gradient ]) -----
    @property
    def requires_grad(self):
        return self._sparse_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._sparse_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._sparse_values.grad_fn

    @grad_fn.setter
    def grad_fn(self, node):
        raise RuntimeError("a sparse tensor's grad_fn is its values' (NOTE [ Sparse values carry the gradient ])")

    @property
    def grad(self):
        """The gradient of a sparse leaf: sparse, with this tensor's pattern."""
        values_grad = self._sparse_values.grad
        if values_grad is None:
            return None
        return SparseTensor(self._sparse_indices, values_grad, self._sparse_size, self._is_coalesced)

    @grad.setter
    def grad(self, value):
        if value is None:
            self._sparse_values.grad = None
        elif value.is_sparse and value._sparse_indices is self._sparse_indices:
            self._sparse_values.grad = value._sparse_values
        else:
            raise RuntimeError("ember stores a sparse leaf's gradient on its values: assign None or a sparse "
                               "gradient with the leaf's own indices")

    def zero_(self):
        """Drop every entry, in place (an optimizer's ``zero_grad(set_to_none=False)``)."""
        self._sparse_indices = self._sparse_indices[:, :0].clone()
        self._sparse_values = self._sparse_values.detach()[:0].clone()
        self._is_coalesced = True
        return self

    def detach(self):
        return SparseTensor(self._sparse_indices, self._sparse_values.detach(), self._sparse_size,
                            self._is_coalesced)

    def clone(self, memory_format=None):
        return SparseTensor(self._sparse_indices.clone(), self._sparse_values.clone(), self._sparse_size,
                            self._is_coalesced)

    # --- conversions -----------------------------------------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None):
        return to_dense(self, dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            from ember.native.sparse.csr import to_sparse_csr

            return to_sparse_csr(self.to_dense())
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim=None):
        from ember.native.sparse.csr import to_sparse_csr

        return to_sparse_csr(self.to_dense())

    def coalesce(self):
        return coalesce(self)

    def to(self, *args, **kwargs):
        values = self._sparse_values.to(*args, **kwargs)
        if values is self._sparse_values:
            return self
        return SparseTensor(self._sparse_indices.to(values.device), values, self._sparse_size, self._is_coalesced)

    def type(self, dtype=None):
        return super().type(dtype) if dtype is not None else f"ember.sparse.{super().type()[len('ember.'):]}"

    def t(self):
        return transpose(self, 0, 1)

    def transpose(self, dim0, dim1):
        return transpose(self, dim0, dim1)

    def __repr__(self, *, tensor_contents=None):
        from ember._tensor_str import sparse_repr

        return sparse_repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._sparse_indices, self._sparse_values, tuple(self._sparse_size),
                           self._is_coalesced))

    def __deepcopy__(self, memo):
        out = self.clone()
        memo[id(self)] = out
        return out


def _rebuild(indices, values, size, coalesced):
    return SparseTensor(indices, values, size, coalesced)


def _int64_tensor(array, device):
    from ember.native.factory import tensor

    return tensor(np.ascontiguousarray(array, dtype=np.int64), device=device)


def _host_indices(sparse):
    return np.asarray(sparse._sparse_indices.detach()._host())


# --- construction ------------------------------------------------------------------------


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at position ``indices[:, k]`` (positions
    listed twice add up).

    Args:
        indices: ``[sparse_dim, nnz]`` integers (a tensor or nested lists).
        values: ``[nnz, *dense_dims]``.
        size: the tensor's shape; by default each sparse dim is its largest index plus
            one, each dense dim the values'.
        dtype, device: of the values (by default ``values``').
        requires_grad: make the result a leaf that requires grad.
        check_invariants: check that every index lies inside ``size`` (torch leaves it
            off by default, and so does ember).
        is_coalesced: promise that the indices are sorted and unique (not checked).

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 1], [2, 0]], [3., 4.], (2, 3))
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 0.]])
    """
    from ember.native.factory import tensor

    if not isinstance(indices, Tensor):
        indices = tensor(indices, dtype=dtypes.int64, device=device)
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=dtype, device=device)
    if indices.dtype is not dtypes.int64:
        indices = indices.to(dtypes.int64)
    if values.ndim == 0:  # torch reads a 0-d value as no entries
        values = values.reshape(1)
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    _check_parts(indices, values)
    size = _infer_size(indices, values) if size is None else tuple(int(s) for s in size)
    _check_size(indices, values, size)
    if check_invariants:
        _check_bounds(indices, size)
    values = values if values.requires_grad else values.detach()
    if requires_grad:
        values = values.detach().requires_grad_(True)
    coalesced = bool(is_coalesced) if is_coalesced is not None else indices.shape[1] < 2
    return SparseTensor(indices.to(values.device), values, size, coalesced)


def _check_parts(indices, values):
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")


def _infer_size(indices, values):
    host = np.asarray(indices._host())
    sparse_sizes = host.max(axis=1) + 1 if host.shape[1] else np.zeros(host.shape[0], dtype=np.int64)
    return tuple(int(s) for s in sparse_sizes) + tuple(values.shape[1:])


def _check_size(indices, values, size):
    sparse_dim, dense_dim = indices.shape[0], values.ndim - 1
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    expected = [values.shape[0], *size[sparse_dim:]]
    if list(values.shape) != expected:
        raise RuntimeError(f"values has incorrect size, expected {expected}, got {list(values.shape)}")


def _check_bounds(indices, size):
    host = np.asarray(indices._host())
    for dim in range(host.shape[0]):
        if host.shape[1] == 0:
            break
        low, high = int(host[dim].min()), int(host[dim].max())
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {dim}")
        if high >= size[dim]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is {size[dim]} but found "
                               f"index {high}")


# --- conversions -------------------------------------------------------------------------


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The entries of a dense ``input`` that are not zero, as a coalesced COO tensor;
    with ``sparse_dim`` the first ``sparse_dim`` dims are sparse and each entry a dense
    block holding at least one nonzero.

    >>> import ember
    >>> ember.tensor([[0., 2.], [3., 0.]]).to_sparse()._values()
    tensor([2., 3.])
    """
    if input.is_sparse:
        return input.to_sparse(sparse_dim, layout=layout)
    if layout is not None and layout is not sparse_coo:
        from ember.native.sparse.csr import to_sparse_csr

        return to_sparse_csr(input)
    sparse_dim = input.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sparse_dim <= input.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{input.ndim}] range, but "
                           f"{sparse_dim} is given")
    if sparse_dim == 0 and input.ndim > 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    sparse_sizes, dense_sizes = tuple(input.shape[:sparse_dim]), tuple(input.shape[sparse_dim:])
    host = np.asarray(input.detach()._host())
    nonzero = host != 0
    if dense_sizes:
        nonzero = nonzero.reshape(*sparse_sizes, -1).any(axis=-1)
    positions = np.argwhere(nonzero).T.astype(np.int64)  # [sparse_dim, nnz], row-major order
    rows = input.reshape(int(np.prod(sparse_sizes, dtype=np.int64)), *dense_sizes)
    picked = _int64_tensor(flatten_indices(positions, sparse_sizes), input.device)
    values = rows.index_select(0, picked)
    return SparseTensor(_int64_tensor(positions, input.device), values, input.shape, True)


def to_dense(sparse, dtype=None):
    """The dense tensor a COO tensor stands for: zeros, plus each entry's value added at
    its position (so repeated positions add up). Differentiable in the values."""
    from ember.native.factory import zeros

    sparse_dim = sparse.sparse_dim()
    sizes = tuple(sparse.shape)
    values = sparse._sparse_values if dtype is None else sparse._sparse_values.to(dtype)
    rows = int(np.prod(sizes[:sparse_dim], dtype=np.int64))
    position = _int64_tensor(flatten_indices(_host_indices(sparse), sizes[:sparse_dim]), sparse.device)
    out = zeros((rows, *sizes[sparse_dim:]), dtype=values.dtype, device=sparse.device)
    return out.index_add(0, position, values).reshape(sizes)


def coalesce(sparse):
    """The same tensor with each position listed once, in row-major order, the values of
    repeated positions summed; a coalesced tensor is returned as it is."""
    if not sparse.is_sparse:
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {_layout_name(sparse)}")
    if sparse._is_coalesced:
        return sparse
    from ember.native.factory import zeros

    unique, inverse = coalesce_plan(_host_indices(sparse))
    values = sparse._sparse_values
    summed = zeros((unique.shape[1], *values.shape[1:]), dtype=values.dtype, device=values.device)
    summed = summed.index_add(0, _int64_tensor(inverse, values.device), values)
    return SparseTensor(_int64_tensor(unique, values.device), summed, sparse.shape, True)


def transpose(sparse, dim0, dim1):
    """Swap two sparse dims: their rows of ``indices`` trade places (the result is no
    longer sorted, so not coalesced, as in torch)."""
    ndim = sparse.ndim
    dim0, dim1 = _wrap_dim(dim0, ndim), _wrap_dim(dim1, ndim)
    if max(dim0, dim1) >= sparse.sparse_dim():
        raise RuntimeError("transpose of a sparse tensor's dense dims is not supported by ember")
    order = list(range(sparse.sparse_dim()))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    size = list(sparse.shape)
    size[dim0], size[dim1] = size[dim1], size[dim0]
    indices = sparse._sparse_indices[order]
    coalesced = sparse._is_coalesced and dim0 == dim1
    return SparseTensor(indices, sparse._sparse_values, size, coalesced)


def _layout_name(tensor):
    return "Strided" if tensor.layout is strided else str(tensor.layout)


# --- the methods a dense tensor has for these ----------------------------------------


def dense_to_dense(input, dtype=None, *, masked_grad=None):
    """``Tensor.to_dense`` of a strided tensor: the tensor itself (or cast)."""
    return input if dtype is None else input.to(dtype)


def dense_is_coalesced(input):
    raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got {_layout_name(input)}")


def dense_indices(input):
    raise RuntimeError(f"indices expected sparse coordinate tensor layout but got {_layout_name(input)}")


def dense_values(input):
    raise RuntimeError(f"values expected sparse coordinate tensor layout but got {_layout_name(input)}")


def dense_sparse_dim(input):
    return 0


def dense_dense_dim(input):
    return input.ndim


def dense_nnz(input):
    raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend.")
