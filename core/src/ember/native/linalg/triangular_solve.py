"""Triangular systems: ``linalg.solve_triangular`` (and the older ``triangular_solve``).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp
(``linalg_solve_triangular``, ``triangular_solve``) and their derivatives.yaml
entries (v2.13).

The reference is a composition: the triangle of A that the call names (with ones on
the diagonal for ``unitriangular=True``; the other triangle is never read, as in
LAPACK's ``trtrs``) is handed to ``linalg.solve``. The result is the same solution
(LAPACK's back substitution and LU differ only in rounding), and the gradient comes
from solve's and from the masking, so A's gradient lies in the triangle read, as
PyTorch's does.
"""

import collections

from ember.native.linalg.checks import check_floating, check_matrix, check_square


def triangle(A, upper, unitriangular):
    """The part of A a triangular solve reads."""
    if not unitriangular:
        return A.triu() if upper else A.tril()
    from ember.native.factory import eye

    strict = A.triu(1) if upper else A.tril(-1)
    return strict + eye(A.shape[-1], dtype=A.dtype, device=A.device)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A X = B`` (``X A = B`` for ``left=False``) for triangular A, batched.

    >>> import ember
    >>> ember.linalg.solve_triangular(ember.tensor([[2., 1.], [0., 4.]]), ember.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    from ember.native.linalg.solve import solve

    check_square(A, "linalg.solve_triangular")
    check_matrix(B, "linalg.solve_triangular", "B")
    check_floating(A, "linalg.solve_triangular")
    if A.dtype != B.dtype:
        raise RuntimeError("linalg.solve_triangular: Expected A and B to have the same dtype")
    side = B.shape[-2] if left else B.shape[-1]
    if side != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    return solve(triangle(A, upper, unitriangular), B, left=left)


return_types_triangular_solve = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``torch.triangular_solve``, the older spelling: ``(X, A.clone())`` with
    ``op(A) X = b``, ``op`` the transpose when ``transpose=True``; B comes first."""
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types_triangular_solve(solution, A.clone())
