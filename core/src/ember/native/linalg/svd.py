"""The singular value decomposition: ``linalg.svd`` (A = U diag(S) Vh) and
``linalg.svdvals`` (S only).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_svd``) and
``svd_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

Singular values come in descending order and are real for complex A too. The signs
(phases) of singular vector pairs are LAPACK's (PyTorch calls the same routine family,
gesdd); a loss that depends on them is ill-defined, and for complex A PyTorch's backward
refuses it, as ember's does. Gradient in PyTorch's convention (NOTE [ Complex gradients ]
in autograd/graph.py), over the first k = min(m, n) columns of U and rows of Vh (the
full ones are narrowed), E_ij = S_j^2 - S_i^2, skew(X) = X - X^H:
gA = U [skew(U^H gU) S / E + S skew(V^H gV) / E + diag(gS) + diag(skew(U^H gU)) / 2S] Vh
     + (I - U U^H) gU S^-1 Vh + U S^-1 gV^H (I - V V^H)
(the diag(.) / 2S term is zero for real A). It needs distinct singular values (E has no
zero off the diagonal), as PyTorch's does; ``svdvals`` needs only U diag(gS) Vh.
"""

import collections

from ember.amp.state import composite_inputs
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix

return_types_svd = collections.namedtuple("svd", ["U", "S", "Vh"])


def _svd_kernel(xp, a, full_matrices):
    m, n = a.shape[-2:]
    real = xp.empty(0, dtype=a.dtype).real.dtype  # singular values are real for complex A too
    if a.size == 0:
        batch = a.shape[:-2]
        k = min(m, n)
        u_cols, vh_rows = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(xp.eye(m, u_cols, dtype=a.dtype), batch + (m, u_cols))
        vh = xp.broadcast_to(xp.eye(vh_rows, n, dtype=a.dtype), batch + (vh_rows, n))
        return u.copy(), xp.zeros(batch + (k,), dtype=real), vh.copy()
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return u, s.astype(real), vh


def _check_gauge(uhgu, vhgv):
    diagonal = (uhgu if vhgv is None else uhgu + vhgv) if uhgu is not None else vhgv
    if diagonal.is_complex() and bool((diagonal.diagonal(0, -2, -1).imag.abs() > 1e-2).any()):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                           "making it ill-defined.")


def _narrowed(ctx, u, vh, grad_u, grad_vh):
    """Full U and Vh enter the gradient through their first k columns (rows) only, as
    PyTorch's derivative narrows them."""
    k = min(u.shape[-2], vh.shape[-1])
    if not ctx.attrs["full_matrices"]:
        return u, vh, grad_u, grad_vh
    return (u[..., :k], vh[..., :k, :], None if grad_u is None else grad_u[..., :k],
            None if grad_vh is None else grad_vh[..., :k, :])


@complex_formula
def _svd_backward(ctx, grad_u, grad_s, grad_vh):
    from ember.native.factory import eye

    u, s, vh = ctx.saved_outputs
    u, vh, grad_u, grad_vh = _narrowed(ctx, u, vh, grad_u, grad_vh)
    if grad_u is None and grad_vh is None:
        return ((u * grad_s.unsqueeze(-2).to(u.dtype)) @ vh,)
    k = s.shape[-1]
    v = vh.mH
    s_row, s_col = s.unsqueeze(-2), s.unsqueeze(-1)
    identity = eye(k, dtype=s.dtype, device=s.device)
    gaps = (s_row * s_row - s_col * s_col) + identity  # E, with ones on its (unused) diagonal
    uhgu = None if grad_u is None else u.mH @ grad_u
    uhgu = None if uhgu is None else uhgu - uhgu.mH
    vhgv = None if grad_vh is None else vh @ grad_vh.mH
    vhgv = None if vhgv is None else vhgv - vhgv.mH
    _check_gauge(uhgu, vhgv)
    inner = grad_s.diag_embed().to(u.dtype) if grad_s is not None else identity * 0.0
    if uhgu is not None:
        inner = inner + uhgu / gaps * s_row * (1 - identity)
        if uhgu.is_complex():  # the phase of U's columns, which V's phase does not cancel
            inner = inner + (uhgu.diagonal(0, -2, -1) / (2 * s)).diag_embed()
    if vhgv is not None:
        inner = inner + s_col * (vhgv / gaps) * (1 - identity)
    grad_a = u @ inner @ vh
    m, n = u.shape[-2], v.shape[-2]
    if grad_u is not None and m > k:
        grad_a = grad_a + (grad_u - u @ (u.mH @ grad_u)) / s_row @ vh
    if grad_vh is not None and n > k:
        grad_v = grad_vh.mH
        grad_a = grad_a + u @ ((grad_v - v @ (v.mH @ grad_v)) / s_row).mH
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
