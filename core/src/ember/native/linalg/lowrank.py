"""Randomized low-rank decompositions: ``svd_lowrank`` and ``pca_lowrank``.

PyTorch counterpart: torch/_lowrank.py (``get_approximate_basis``, ``svd_lowrank``,
``pca_lowrank``) (v2.13).

Halko, Martinsson and Tropp's range finder (arXiv:0909.4061, algorithm 4.4): multiply
A by a Gaussian n x q matrix, orthonormalize the product (QR), and refine the basis by
``niter`` rounds of power iteration through A^H and A; then the SVD of the small q x n
matrix Q^H A, lifted back by Q, approximates A's leading singular triplets. A wide A
is decomposed through A^H. Everything is a composition of ember ops, so gradients come
from ``qr``'s and ``svd``'s. The Gaussian draws come from ember's generator, which
reproduces PyTorch's stream: after the same ``manual_seed`` both return the same
factors.
"""


def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (M, the
    mean, is never subtracted from A itself: it may be a broadcast view)."""
    from ember.native.factory import randn
    from ember.native.linalg.qr import qr

    dtype = A.dtype if A.is_complex() or A.is_floating_point() else None
    sketch = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def times(X):
        return A @ X if M is None else A @ X - M @ X

    def adjoint_times(X):
        return A.mH @ X if M is None else A.mH @ X - M.mH @ X

    basis = qr(times(sketch)).Q
    for _ in range(niter):
        basis = qr(adjoint_times(basis)).Q
        basis = qr(times(basis)).Q
    return basis


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)``, an approximation of A's (or A - M's) q leading singular triplets:
    ``A ~ U diag(S) V^H``.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> A = ember.tensor([[3., 0.], [0., 1.], [0., 0.]])
    >>> ember.svd_lowrank(A, q=2)[1]
    tensor([3., 1.])
    """
    from ember.native.linalg.svd import svd

    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    wide = m < n
    if wide:  # decompose A^H, whose range is the smaller one
        A = A.mH
        M = None if M is None else M.mH
    basis = _approximate_basis(A, q, niter, M)
    small = basis.mH @ A if M is None else basis.mH @ A - basis.mH @ M
    U, S, Vh = svd(small, full_matrices=False)
    U, V = basis @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)`` of the (column-centered, with ``center``) data matrix A: the
    principal directions are V's columns, the variances ``S**2 / (m - 1)``.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> A = ember.tensor([[1., 2.], [3., 4.], [5., 7.]])
    >>> ember.pca_lowrank(A, q=1)[1]
    tensor([4.5389])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A, q, niter=niter)
