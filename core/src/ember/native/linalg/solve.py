"""Inverse and linear systems: ``linalg.inv`` and ``linalg.solve``.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_inv``,
``linalg_solve``) and their derivatives.yaml entries (v2.13).

Both run LAPACK's LU through NumPy over stacks of matrices. Gradients (with X the
result): ``inv``: gA = -X^T gX X^T; ``solve`` (A X = B): gB = solve(A^T, gX) and
gA = -gB X^T. They are written with ember ops, so they differentiate again.
"""

from ember.amp.state import composite_inputs
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import LinAlgError, batch_prefix, check_floating, check_square, first_zero_pivot


def _inv_kernel(xp, a):
    try:
        return xp.linalg.inv(a)
    except xp.linalg.LinAlgError:
        index, pivot = first_zero_pivot(xp, a) or (0, 0)
        raise LinAlgError(f"linalg.inv: {batch_prefix(a, index)}The diagonal element {pivot} is zero, the inversion "
                          "could not be completed because the input matrix is singular.") from None


def _inv_backward(ctx, grad):
    (x,) = ctx.saved_outputs
    x_t = x.mT
    return (-(x_t @ grad @ x_t),)


INV = Op("aten::linalg_inv", _inv_kernel, _inv_backward, promote=NONE, save="outputs",
         backward_name="LinalgInvExBackward0")


def inv(A):
    """The inverse of each square matrix in ``A`` (batched over leading dims).

    >>> import ember
    >>> ember.linalg.inv(ember.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    (A,) = composite_inputs("linalg_inv", A)  # on autocast's fp32 list
    check_square(A, "linalg.inv")
    check_floating(A, "linalg.inv")
    return INV(A)


def _solve_kernel(xp, a, b):
    try:
        return xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError:
        raise LinAlgError("ember.linalg.solve: The solver failed because the input matrix is singular.") from None


def _solve_backward(ctx, grad):
    a, _ = ctx.saved_inputs
    (x,) = ctx.saved_outputs
    need_a, need_b = ctx.needs_input_grad
    grad_b = SOLVE(a.mT, grad)
    grad_a = -(grad_b @ x.mT) if need_a else None
    return grad_a, (grad_b if need_b else None)


SOLVE = Op("aten::linalg_solve", _solve_kernel, _solve_backward, promote=NONE, save="both",
           backward_name="LinalgSolveExBackward0")


def _is_vector_rhs(A, B):
    """PyTorch reads B as a (batch of) vector(s) when it is 1-d, or has one dim less
    than A and A's batch shape followed by n."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True):
    """X with ``A X = B`` (``X A = B`` for ``left=False``), batched; B may be a vector.

    >>> import ember
    >>> ember.linalg.solve(ember.tensor([[2., 0.], [0., 4.]]), ember.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    A, B = composite_inputs("linalg_solve", A, B)  # on autocast's fp32 list
    check_square(A, "linalg.solve")
    check_floating(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_name(A)} and B of type {_name(B)} instead")
    if not left:
        return solve(A.mT, B.mT).mT
    if _is_vector_rhs(A, B):
        return SOLVE(A, B.unsqueeze(-1)).squeeze(-1)
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    batch = _broadcast_batch(A, B)
    return SOLVE(A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:])))


def _broadcast_batch(A, B):
    import numpy as np

    return tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))


def _name(t):
    from ember.native.support._inplace import _type_name

    return _type_name(t.dtype)
