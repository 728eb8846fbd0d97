"""``ember.sparse.softmax`` and ``log_softmax``: a softmax over the specified entries
only, the unspecified ones counting as minus infinity (so they stay unspecified).

PyTorch counterpart: aten/src/ATen/native/sparse/SoftMax.cpp (``softmax_sparse_cpu``) (v2.13).

Along a sparse dim, the entries that share every other sparse index form one group (a
row of a matrix for ``dim=1``); each group is normalised by itself. Along a dense dim
the values are dense blocks and ember's dense softmax applies to them. The result is
coalesced, with the input's coalesced pattern.
"""

import numpy as np

from ember.native.sparse.coalesce import groups_except
from ember.native.sparse.sparse_tensor import SparseTensor, _host_indices, _int64_tensor, coalesce
from ember.tensor import _wrap_dim


def _group_sums(values, group, groups):
    from ember.native.factory import zeros

    out = zeros((groups, *values.shape[1:]), dtype=values.dtype, device=values.device)
    return out.index_add(0, group, values)


def _group_max(values, group, groups):
    """Each group's largest value, per entry: a constant (softmax does not depend on
    it), so plain NumPy's ``maximum.at``."""
    from ember.native.factory import tensor

    host = np.asarray(values.detach()._host())
    out = np.full((groups, *host.shape[1:]), -np.inf, dtype=host.dtype)
    np.maximum.at(out, group, host)
    return tensor(out[group], device=values.device)


def _softmax(input, dim, dtype, log):
    if not input.is_sparse:
        raise RuntimeError("softmax: expected a sparse COO tensor, got a strided one (use ember.softmax)")
    dim = _wrap_dim(dim, input.ndim)
    sparse = coalesce(input if dtype is None else input.to(dtype))
    values = sparse._sparse_values
    if dim >= sparse.sparse_dim():  # a dense dim: each entry's block on its own
        dense_dim = dim - sparse.sparse_dim() + 1
        out = values.log_softmax(dense_dim) if log else values.softmax(dense_dim)
    else:
        group, groups = groups_except(_host_indices(sparse), dim)
        shifted = values - _group_max(values, group, groups)
        group = _int64_tensor(group, values.device)
        exps = shifted.exp()
        sums = _group_sums(exps, group, groups).index_select(0, group)
        out = shifted - sums.log() if log else exps / sums
    return SparseTensor(sparse._sparse_indices, out, sparse.shape, True)


def softmax(input, dim, *, dtype=None):
    """Softmax of a sparse COO tensor along ``dim`` over its specified entries.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 0, 1], [0, 2, 1]], [1., 1., 5.], (2, 3))
    >>> ember.sparse.softmax(s, 1).to_dense()
    tensor([[0.5000, 0.0000, 0.5000],
            [0.0000, 1.0000, 0.0000]])
    """
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """The log of :func:`softmax`, computed without its underflow."""
    return _softmax(input, dim, dtype, log=True)
