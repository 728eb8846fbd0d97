"""The ``_ex`` variants: ``linalg.inv_ex``, ``cholesky_ex`` and ``solve_ex``, which
report a failure in an ``info`` tensor instead of raising (unless ``check_errors``).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_inv_ex``,
``linalg_cholesky_ex``, ``linalg_solve_ex``) (v2.13).

``info`` is an int32 tensor of A's batch shape: 0 where the matrix was factored, else
LAPACK's number (the 1-based zero pivot of the LU, the order of the first minor that
is not positive-definite). The result is computed by the op without ``_ex`` where
every matrix succeeds; where one fails ember fills the whole result with NaN (PyTorch
returns whatever LAPACK left in its buffer, which no program should read).
"""

import collections

import numpy as np

from ember.native.linalg.checks import check_floating, check_square

return_types_inv_ex = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
return_types_cholesky_ex = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
return_types_solve_ex = collections.namedtuple("linalg_solve_ex", ["result", "info"])


def _lu_info(A):
    """LAPACK getrf's info per matrix: the 1-based index of the first zero pivot, or 0."""
    from ember.native.linalg.lu import LU_FACTOR

    return LU_FACTOR(A.detach())[2]


def _cholesky_info(A):
    """LAPACK potrf's info per matrix (of the lower triangle): the order of the first
    leading minor that is not positive-definite, or 0."""
    import scipy.linalg.lapack

    from ember.dtypes import int32
    from ember.native.factory import tensor

    array = np.asarray(A.detach().cpu().numpy())
    stack = array.reshape((int(np.prod(array.shape[:-2])),) + array.shape[-2:])
    potrf = scipy.linalg.lapack.get_lapack_funcs("potrf", dtype=array.dtype)
    infos = np.array([potrf(m, lower=1)[1] if m.size else 0 for m in stack], dtype=np.int32)
    return tensor(infos.reshape(array.shape[:-2]), dtype=int32, device=A.device)


def _guarded(compute, A, info, check_errors, core_dims=2):
    """``compute(A)``; where a matrix failed, its result is NaN (``check_errors``:
    ``compute`` raises its LinAlgError instead). A failed matrix is swapped for the
    identity before computing, so the others' results are the op's own."""
    if not bool(info.any()):
        return compute(A)
    if check_errors:
        compute(A)  # raises the op's own LinAlgError, naming the matrix
    from ember.native.factory import eye
    from ember.native.indexing.indexing import where

    failed = (info != 0).reshape(tuple(info.shape) + (1, 1))
    result = compute(where(failed, eye(A.shape[-1], dtype=A.dtype, device=A.device), A))
    return result.masked_fill((info != 0).reshape(tuple(info.shape) + (1,) * core_dims), float("nan"))


def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``linalg.inv(A)`` and the LU's info per matrix.

    >>> import ember
    >>> ember.linalg.inv_ex(ember.tensor([[2., 0.], [0., 0.]])).info
    tensor(2, dtype=ember.int32)
    """
    from ember.native.linalg.solve import inv

    check_square(A, "linalg.inv_ex")
    check_floating(A, "linalg.inv_ex")
    info = _lu_info(A)
    return return_types_inv_ex(_guarded(inv, A, info, check_errors), info)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: ``linalg.cholesky(A, upper=upper)`` and potrf's info per matrix."""
    from ember.native.linalg.cholesky import cholesky

    check_square(A, "linalg.cholesky_ex")
    check_floating(A, "linalg.cholesky_ex")
    info = _cholesky_info(A)
    return return_types_cholesky_ex(_guarded(lambda M: cholesky(M, upper=upper), A, info, check_errors), info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)``: ``linalg.solve(A, B, left=left)`` and the LU's info per matrix."""
    from ember.native.linalg.solve import _is_vector_rhs, solve

    check_square(A, "linalg.solve_ex")
    check_floating(A, "linalg.solve_ex")
    info = _lu_info(A)
    core_dims = 1 if left and _is_vector_rhs(A, B) else 2
    return return_types_solve_ex(_guarded(lambda M: solve(M, B, left=left), A, info, check_errors, core_dims), info)
