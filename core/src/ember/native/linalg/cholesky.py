"""The Cholesky factor: ``linalg.cholesky``, A = L L^T for symmetric positive-definite A.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_cholesky``)
and ``cholesky_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

Only the lower triangle of A is read (LAPACK's convention, which PyTorch keeps), so
the gradient is symmetrised: with Phi(X) = tril(X) with its diagonal halved,
gA = L^-T Phi(L^T gL) L^-1, then (gA + gA^T) / 2.
"""

from ember.amp.state import composite_inputs
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import LinAlgError, batch_prefix, check_floating, check_square, first_non_positive_minor


def _cholesky_kernel(xp, a):
    lower = xp.tril(a)
    symmetric = lower + xp.swapaxes(xp.tril(a, -1), -1, -2)  # LAPACK reads only the lower triangle
    try:
        return xp.linalg.cholesky(symmetric)
    except xp.linalg.LinAlgError:
        index, order = first_non_positive_minor(xp, symmetric)
        raise LinAlgError(f"linalg.cholesky: {batch_prefix(a, index)}The factorization could not be completed "
                          "because the input is not positive-definite (the leading minor of order "
                          f"{order} is not positive-definite).") from None


def _phi(x):
    """The lower triangle with the diagonal halved."""
    return x.tril() - 0.5 * x.diagonal(0, -2, -1).diag_embed()


def _cholesky_backward(ctx, grad):
    from ember.native.linalg.solve import inv

    (lower,) = ctx.saved_outputs
    lower_inv = inv(lower)
    grad_a = lower_inv.mT @ _phi(lower.mT @ grad) @ lower_inv
    return (0.5 * (grad_a + grad_a.mT),)


CHOLESKY = Op("aten::linalg_cholesky", _cholesky_kernel, _cholesky_backward, promote=NONE, save="outputs",
              backward_name="LinalgCholeskyExBackward0")


def cholesky(A, *, upper=False):
    """The lower-triangular L with ``A = L L^T`` (``upper=True``: U = L^T).

    >>> import ember
    >>> ember.linalg.cholesky(ember.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    (A,) = composite_inputs("linalg_cholesky", A)  # on autocast's fp32 list
    check_square(A, "linalg.cholesky")
    check_floating(A, "linalg.cholesky")
    lower = CHOLESKY(A)
    return lower.mT if upper else lower
