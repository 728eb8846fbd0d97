"""The singular value decomposition: ``linalg.svd`` (A = U diag(S) Vh) and
``linalg.svdvals`` (S only).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_svd``) and
``svd_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

Singular values come in descending order. The signs of singular vector pairs are
LAPACK's (PyTorch calls the same routine family, gesdd); a loss that depends on the
signs is ill-defined, as PyTorch's docs warn. Gradient (reduced SVD, k = min(m, n),
E_ij = S_j^2 - S_i^2, skew(X) = X - X^T):
gA = U [skew(U^T gU) S / E + S skew(V^T gV) / E + diag(gS)] Vh
     + (I - U U^T) gU S^-1 Vh + U S^-1 gV^T (I - V V^T).
It needs distinct singular values (E has no zero off the diagonal), as PyTorch's does;
``svdvals`` needs only U diag(gS) Vh.
"""

import collections

from ember.amp.state import composite_inputs
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix

return_types_svd = collections.namedtuple("svd", ["U", "S", "Vh"])


def _svd_kernel(xp, a, full_matrices):
    m, n = a.shape[-2:]
    if a.size == 0:
        batch = a.shape[:-2]
        k = min(m, n)
        u_cols, vh_rows = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(xp.eye(m, u_cols, dtype=a.dtype), batch + (m, u_cols))
        vh = xp.broadcast_to(xp.eye(vh_rows, n, dtype=a.dtype), batch + (vh_rows, n))
        return u.copy(), xp.zeros(batch + (k,), dtype=a.dtype), vh.copy()
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return u, s.astype(a.dtype), vh


def _svd_backward(ctx, grad_u, grad_s, grad_vh):
    from ember.native.factory import eye

    u, s, vh = ctx.saved_outputs
    if ctx.attrs["full_matrices"] and u.shape[-1] != vh.shape[-2]:
        raise NotImplementedError("ember's linalg.svd backward needs full_matrices=False for non-square input")
    if grad_u is None and grad_vh is None:
        return ((u * grad_s.unsqueeze(-2)) @ vh,)
    k = s.shape[-1]
    v = vh.mT
    s_row, s_col = s.unsqueeze(-2), s.unsqueeze(-1)
    identity = eye(k, dtype=s.dtype, device=s.device)
    gaps = (s_row * s_row - s_col * s_col) + identity  # E, with ones on its (unused) diagonal
    inner = grad_s.diag_embed() if grad_s is not None else identity * 0.0
    if grad_u is not None:
        uhgu = u.mT @ grad_u
        inner = inner + (uhgu - uhgu.mT) / gaps * s_row
    if grad_vh is not None:
        vhgv = v.mT @ grad_vh.mT
        inner = inner + s_col * ((vhgv - vhgv.mT) / gaps)
    grad_a = u @ inner @ vh
    m, n = u.shape[-2], v.shape[-2]
    if grad_u is not None and m > k:
        grad_a = grad_a + (grad_u - u @ (u.mT @ grad_u)) / s_row @ vh
    if grad_vh is not None and n > k:
        grad_v = grad_vh.mT
        grad_a = grad_a + u @ ((grad_v - v @ (v.mT @ grad_v)) / s_row).mT
    return (grad_a,)


SVD = Op("aten::linalg_svd", _svd_kernel, _svd_backward, promote=NONE, save="outputs", num_outputs=3,
         backward_name="LinalgSvdBackward0")


def svd(A, full_matrices=True):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending.

    >>> import ember
    >>> ember.linalg.svd(ember.tensor([[3., 0.], [0., -2.]])).S
    tensor([3., 2.])
    """
    (A,) = composite_inputs("linalg_svd", A)  # on autocast's fp32 list
    check_matrix(A, "linalg.svd")
    check_floating(A, "linalg.svd")
    return return_types_svd(*SVD(A, full_matrices=bool(full_matrices)))


def svdvals(A):
    """The singular values of ``A``, descending.

    >>> import ember
    >>> ember.linalg.svdvals(ember.tensor([[3., 0.], [0., -2.]]))
    tensor([3., 2.])
    """
    (A,) = composite_inputs("linalg_svdvals", A)  # on autocast's fp32 list
    check_matrix(A, "linalg.svdvals")
    check_floating(A, "linalg.svdvals")
    return SVD(A, full_matrices=False)[1]
