"""The matrix exponential: ``linalg.matrix_exp``, exp(A) = I + A + A^2/2! + ...

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``linalg_matrix_exp``,
``backward_analytic_function_of_a_matrix``) (v2.13).

The forward is scaling and squaring: halve A until its norm is small, sum a degree-18
Taylor series (in Horner form), then square back. PyTorch picks among several
polynomial degrees by the norm; the results agree to rounding. The gradient uses the
identity exp([[A^T, G], [0, A^T]]) = [[exp(A^T), gA], [0, exp(A^T)]]: one more matrix
exponential, of a matrix twice the size, so it differentiates again.
"""

from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square

_TAYLOR_DEGREE = 18


def _matrix_exp_kernel(xp, a):
    if a.size == 0:
        return a.copy()
    work = a.astype(xp.result_type(a.dtype, xp.float64))  # complex128 for complex A
    norms = xp.abs(work).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix
    squarings = int(max(0, xp.ceil(xp.log2(max(float(norms.max()), 1e-300) / 0.25))))
    work = work / 2.0 ** squarings
    identity = xp.broadcast_to(xp.eye(a.shape[-1]), work.shape)
    result = identity.copy()
    for k in range(_TAYLOR_DEGREE, 0, -1):  # Horner: I + A/1 (I + A/2 (I + ...))
        result = identity + work @ result / k
    for _ in range(squarings):
        result = result @ result
    return result.astype(a.dtype)


def _matrix_exp_backward(ctx, grad):
    from ember.native.shape.shape import cat

    (a,) = ctx.saved_inputs
    n = a.shape[-1]
    zeros = a.mT * 0.0
    block = cat([cat([a.mT, grad], -1), cat([zeros, a.mT], -1)], -2)
    return (MATRIX_EXP(block)[..., :n, n:],)


MATRIX_EXP = Op("aten::linalg_matrix_exp", _matrix_exp_kernel, _matrix_exp_backward, promote=NONE,
                save="inputs", backward_name="LinalgMatrixExpBackward0")


def matrix_exp(A):
    """The matrix exponential of each square matrix in ``A``.

    >>> import ember
    >>> ember.linalg.matrix_exp(ember.tensor([[0., 1.], [0., 0.]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    check_square(A, "linalg.matrix_exp")
    check_floating(A, "linalg.matrix_exp")
    return MATRIX_EXP(A)
