"""Products beyond one matrix pair: ``kron`` (the Kronecker product), ``tensordot``
(contraction over chosen dims) and ``chain_matmul`` (a product of several matrices).

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``kron``, ``tensordot``,
``chain_matmul``) (v2.13).

All three are composites of ``mul``, ``permute``/``reshape`` and ``mm``, so their
gradients are those ops' own. ``tensordot`` moves the contracted dims of ``a`` last
and those of ``b`` first, flattens each side to a matrix and multiplies once.
"""

import math
import warnings

from ember.native.linalg.products import mm
from ember.tensor import Tensor, _wrap_dim


def kron(input, other):
    """The Kronecker product: every element of ``input`` times the whole of ``other``,
    laid out block by block (shapes multiply dim by dim; the shorter shape is padded
    with leading 1s).

    >>> import ember
    >>> ember.kron(ember.tensor([[1, 2], [3, 4]]), ember.tensor([[1, 10]]))
    tensor([[ 1, 10,  2, 20],
            [ 3, 30,  4, 40]])
    """
    ndim = max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
    # a's dims at the even positions, b's at the odd: (a0, b0, a1, b1, ...)
    a = input.reshape([n for size in a_shape for n in (size, 1)])
    b = other.reshape([n for size in b_shape for n in (1, size)])
    return (a * b).reshape([x * y for x, y in zip(a_shape, b_shape)])


def _contracted_dims(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return dims_a, dims_b


def tensordot(a, b, dims=2, out=None):
    """Sum of products over ``dims``: an int ``n`` contracts the last ``n`` dims of
    ``a`` with the first ``n`` of ``b``; a pair of lists names the dims on each side.

    >>> import ember
    >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(4, 3, 5), dims=([1, 2], [1, 0])).shape
    ember.Size([2, 5])
    """
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a, dims_b = _contracted_dims(a, b, dims)
    for da, db in zip(dims_a, dims_b):
        # A size-1 dim contracted with a longer one broadcasts: the other side is summed
        # over that dim first (PyTorch's rule).
        if a.shape[da] != b.shape[db]:
            if a.shape[da] == 1:
                b = b.sum(db, keepdim=True, dtype=b.dtype)
            elif b.shape[db] == 1:
                a = a.sum(da, keepdim=True, dtype=a.dtype)
            else:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim "
                                   f"{da} and second has size {b.shape[db]} in dim {db}")
    dims_a = [_wrap_dim(d, a.ndim) for d in dims_a]
    dims_b = [_wrap_dim(d, b.ndim) for d in dims_b]
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner = math.prod(a.shape[d] for d in dims_a)
    a_matrix = a.permute(free_a + dims_a).reshape(math.prod(a.shape[d] for d in free_a), inner)
    b_matrix = b.permute(dims_b + free_b).reshape(inner, math.prod(b.shape[d] for d in free_b))
    result = mm(a_matrix, b_matrix).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    if out is not None:
        return out.copy_(result)
    return result


def chain_matmul(*matrices, out=None):
    """The product of two or more matrices, left to right (deprecated in PyTorch in favour
    of ``linalg.multi_dot``, which it warns about).

    >>> import ember
    >>> ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 4), ember.ones(4, 1))
    tensor([[12.],
            [12.]])
    """
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        for i in range(len(matrices) - 1):
            if matrices[i].shape[1] != matrices[i + 1].shape[0]:
                raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(matrices[i].shape)} and "
                                   f"{list(matrices[i + 1].shape)} cannot be multiplied")
        result = matrices[0]
        for m in matrices[1:]:
            result = mm(result, m)
    if out is not None:
        return out.copy_(result)
    return result


