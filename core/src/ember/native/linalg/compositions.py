"""The ``linalg`` functions PyTorch itself builds from other ops: ``vecdot``,
``multi_dot``, ``matrix_power`` and ``linalg.diagonal``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``linalg_vecdot``,
``linalg_multi_dot``, ``linalg_matrix_power``, ``linalg_diagonal``) (v2.13).

Each is a few ember ops, so gradients come from those ops' formulas.
"""


def vecdot(x, y, *, dim=-1):
    """The dot product of ``x`` and ``y`` along ``dim`` (``x`` conjugated when complex),
    broadcasting the rest.

    >>> import ember
    >>> ember.linalg.vecdot(ember.tensor([[1., 2.], [3., 4.]]), ember.tensor([1., 1.]))
    tensor([3., 7.])
    """
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_type_name(x)} and y of type {_type_name(y)} instead")
    return (x.conj() * y).sum(dim) if x.is_complex() else (x * y).sum(dim)  # conj(x)^T y, as PyTorch's


def _type_name(x):
    from ember.native.support._inplace import _type_name as name

    return name(x.dtype)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``ember.diagonal`` over the last two dims by default (a view)."""
    from ember.native.shape.diagonal import diagonal as diagonal_view

    return diagonal_view(A, offset, dim1, dim2)


def matrix_power(A, n):
    """``A`` multiplied by itself ``n`` times (the identity for ``n = 0``, powers of the
    inverse for ``n < 0``), by repeated squaring; leading dims are batch dims.

    >>> import ember
    >>> ember.linalg.matrix_power(ember.tensor([[1., 1.], [0., 1.]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    from ember.native.factory import eye
    from ember.native.linalg.products import matmul
    from ember.native.linalg.solve import inv

    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else A.ndim} by {A.shape[-1] if A.ndim else 0} matrices")
    if n == 0:  # A * 0 + I: the identity, recorded against A (a zero gradient), as PyTorch's
        return A * 0 + eye(A.shape[-1], dtype=A.dtype, device=A.device)
    if n < 0:
        A, n = inv(A), -n
    result, square = None, A
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result.clone() if result is A else result


def multi_dot(tensors):
    """``tensors[0] @ tensors[1] @ ...``: the first may be a 1-d row vector and the last a
    1-d column vector, the rest are matrices. (PyTorch orders the products to do the
    fewest multiplications; ember multiplies from the left: the same result up to
    rounding.)

    >>> import ember
    >>> ember.linalg.multi_dot([ember.ones(2), ember.ones(2, 3), ember.ones(3)])
    tensor(6.)
    """
    from ember.native.linalg.products import matmul

    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            which = "first" if i == 0 else ("last" if i == len(tensors) - 1 else None)
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D" if which
                               else f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_type_name(tensors[0])} and tensor {i} {_type_name(t)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result
