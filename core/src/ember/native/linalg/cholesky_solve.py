"""Systems and inverses from a Cholesky factor: ``cholesky_solve`` and
``cholesky_inverse``.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``cholesky_solve``,
``cholesky_inverse``) and their derivatives.yaml entries (v2.13).

With ``A = L L^T`` (``U^T U`` for ``upper=True``), LAPACK's ``potrs`` solves ``A X = B``
by two triangular solves. The reference rebuilds A and calls ``linalg.solve``: the
same solution up to rounding, and the gradient PyTorch defines, in which the factor
is a full matrix (``gL = -(gX' X^T + X gX'^T) L`` with ``gX' = A^-1 gX``), not a
triangle, comes from the product's and solve's. The inverse is the solution for
``B = I``.
"""

from ember.native.linalg.checks import check_floating, check_matrix, check_square


def cholesky_solve(B, L, upper=False):
    """X with ``A X = B`` where ``A = L L^T`` (``upper=True``: ``A = U^T U``), batched.

    >>> import ember
    >>> L = ember.tensor([[2., 0.], [1., 1.]])
    >>> ember.cholesky_solve(ember.tensor([[4.], [3.]]), L)
    tensor([[0.5000],
            [1.0000]])
    """
    from ember.native.linalg.solve import solve

    check_square(L, "cholesky_solve", "A")
    check_matrix(B, "cholesky_solve", "b")
    check_floating(L, "cholesky_solve")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {B.dtype} and A of type "
                           f"{L.dtype} instead.")
    A = L.mH @ L if upper else L @ L.mH
    return solve(A, B)


def cholesky_inverse(L, upper=False):
    """The inverse of ``A = L L^T`` (``U^T U`` for ``upper=True``) from its factor.

    >>> import ember
    >>> ember.cholesky_inverse(ember.tensor([[2., 0.], [0., 1.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    from ember.native.factory import eye

    check_square(L, "cholesky_inverse", "input")
    check_floating(L, "cholesky_inverse")
    identity = eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(*L.shape)
    return cholesky_solve(identity, L, upper=upper)
