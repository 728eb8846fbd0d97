"""The Cholesky factor: ``linalg.cholesky``, A = L L^T for symmetric positive-definite A.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_cholesky``)
and ``cholesky_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

Only the lower triangle of A is read (LAPACK's convention, which PyTorch keeps; the
upper one is taken as its conjugate transpose), so the gradient is made Hermitian: with
X = tril(L^H gL), gA = L^-H [(X + tril(X, -1)^H) / 2] L^-1, in PyTorch's convention
(NOTE [ Complex gradients ] in autograd/graph.py).
"""

from ember.amp.state import composite_inputs
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import LinAlgError, batch_prefix, check_floating, check_square, first_non_positive_minor


def _cholesky_kernel(xp, a):
    lower = xp.tril(a)
    symmetric = lower + xp.swapaxes(xp.tril(a, -1), -1, -2).conj()  # LAPACK reads only the lower triangle
    try:
        return xp.linalg.cholesky(symmetric)
    except xp.linalg.LinAlgError:
        index, order = first_non_positive_minor(xp, symmetric)
        raise LinAlgError(f"linalg.cholesky: {batch_prefix(a, index)}The factorization could not be completed "
                          "because the input is not positive-definite (the leading minor of order "
                          f"{order} is not positive-definite).") from None


@complex_formula
def _cholesky_backward(ctx, grad):
    from ember.native.linalg.solve import inv

    (lower,) = ctx.saved_outputs
    lower_inv = inv(lower)
    product = (lower.mH @ grad).tril()
    hermitian = 0.5 * (product + product.tril(-1).mH)  # Phi(X) + Phi(X)^H, the diagonal once
    return (lower_inv.mH @ hermitian @ lower_inv,)


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
    return lower.mH if upper else lower
