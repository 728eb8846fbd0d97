"""Linear algebra on tensors read as matrices: ``linalg.tensorinv`` and
``linalg.tensorsolve``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``linalg_tensorinv``,
``linalg_tensorsolve``) (v2.13).

Both reshape: the first ``ind`` dims of A are the rows of a matrix and the rest its
columns (tensorinv), or B's dims the rows (tensorsolve); the matrix is inverted or
solved, and the result reshaped back. Gradients come from inv's and solve's.
"""

import math


def tensorinv(A, ind=2):
    """The tensor ``Ainv`` with ``tensordot(Ainv, A, ind)`` the identity: the inverse of
    A read as a ``prod(shape[:ind]) x prod(shape[ind:])`` matrix, shaped
    ``shape[ind:] + shape[:ind]``.

    >>> import ember
    >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
    ember.Size([2, 2, 4])
    """
    from ember.native.linalg.solve import inv

    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}")
    return inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """X with ``tensordot(A, X, X.ndim) = B``: A read as a ``B.numel() x rest`` matrix
    (``dims`` of A are moved to the end first).

    >>> import ember
    >>> ember.linalg.tensorsolve(ember.eye(6).reshape(2, 3, 6), ember.ones(2, 3)).shape
    ember.Size([6])
    """
    from ember.native.linalg.solve import solve

    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    result_shape = tuple(A.shape[B.ndim:])
    rows = math.prod(tuple(A.shape[:B.ndim]))
    if rows != math.prod(result_shape) or rows != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(result_shape)} != {rows}")
    return solve(A.reshape(rows, rows), B.reshape(rows)).reshape(result_shape)
