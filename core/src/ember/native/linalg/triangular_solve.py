"""Triangular systems: ``linalg.solve_triangular`` (and the older ``triangular_solve``).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp
(``linalg_solve_triangular``, ``triangular_solve``) and their derivatives.yaml
entries (v2.13).

The kernel runs LAPACK's back substitution ``trtrs`` (``scipy.linalg.solve_triangular``)
on each matrix of the stack; only the triangle named is read (with ones on the
diagonal for ``unitriangular=True``). Gradients, with X the result of ``A X = B``:
``gB = solve_triangular(A^T, gX)`` (the other triangle) and ``gA = -gB X^T`` kept to
the triangle read, as PyTorch's.
"""

import collections

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix, check_square


def _solve_triangular_kernel(xp, a, b, upper, unitriangular):
    import scipy.linalg

    batch = a.shape[:-2]
    count = int(np.prod(batch))
    matrices, rhs = a.reshape((count,) + a.shape[-2:]), b.reshape((count,) + b.shape[-2:])
    out = np.empty(rhs.shape, dtype=b.dtype)
    for i in range(count):
        out[i] = scipy.linalg.solve_triangular(matrices[i], rhs[i], lower=not upper, unit_diagonal=unitriangular,
                                               check_finite=False)
    return out.reshape(b.shape)


def _solve_triangular_backward(ctx, grad):
    a, _ = ctx.saved_inputs
    (x,) = ctx.saved_outputs
    need_a, need_b = ctx.needs_input_grad
    upper, unit = ctx.attrs["upper"], ctx.attrs["unitriangular"]
    grad_b = SOLVE_TRIANGULAR(a.mT, grad, upper=not upper, unitriangular=unit)
    grad_a = None
    if need_a:
        product = -(grad_b @ x.mT)
        offset = 1 if unit else 0
        grad_a = product.triu(offset) if upper else product.tril(-offset)
    return grad_a, (grad_b if need_b else None)


SOLVE_TRIANGULAR = Op("aten::linalg_solve_triangular", _solve_triangular_kernel, _solve_triangular_backward,
                      promote=NONE, save="both")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A X = B`` (``X A = B`` for ``left=False``) for triangular A, batched.

    >>> import ember
    >>> ember.linalg.solve_triangular(ember.tensor([[2., 1.], [0., 4.]]), ember.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
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
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
    return SOLVE_TRIANGULAR(A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:]), upper=upper,
                            unitriangular=unitriangular)


return_types_triangular_solve = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``torch.triangular_solve``, the older spelling: ``(X, A.clone())`` with
    ``op(A) X = b``, ``op`` the transpose when ``transpose=True``; B comes first."""
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types_triangular_solve(solution, A.clone())
