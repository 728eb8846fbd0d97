"""The QR decomposition: ``linalg.qr``, A = Q R with orthonormal columns in Q and R
upper triangular.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_qr``) and
``linalg_qr_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

Modes: ``"reduced"`` (Q is m x k, R is k x n, k = min(m, n)), ``"complete"`` (Q is
m x m) and ``"r"`` (R only, Q empty). Gradient for m >= n in the reduced mode, with
copyltu(M) the Hermitian matrix built from M's lower triangle (real diagonal):
M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^-H, in PyTorch's convention (NOTE
[ Complex gradients ] in autograd/graph.py). A wide matrix A = [X | Y] (m < n)
splits as X = Q U (square, the formula above with gQ + Y gV^T for gQ) and Y = Q V
(gY = Q gV). The complete mode of a tall matrix has no gradient, as in PyTorch.
"""

import collections

from ember.amp.state import composite_inputs
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix

return_types_qr = collections.namedtuple("qr", ["Q", "R"])


def _qr_kernel(xp, a, mode):
    if a.size == 0:  # LAPACK needs at least one element
        m, n = a.shape[-2:]
        k = min(m, n)
        q_cols = m if mode == "complete" else k
        batch = a.shape[:-2]
        q = xp.zeros(batch + (m, q_cols), dtype=a.dtype)
        q[..., range(min(m, q_cols)), range(min(m, q_cols))] = 1
        return q, xp.zeros(batch + ((m if mode == "complete" else k), n), dtype=a.dtype)
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    return q, r


def _copyltu(m):
    """The strict lower triangle mirrored into the upper one (conjugated), and the real
    part of the diagonal: R's diagonal is real (LAPACK's Householder convention), so only
    the real part of its cotangent moves A."""
    lower = m.tril(-1)
    diagonal = m.diagonal(0, -2, -1)
    diagonal = diagonal.real.to(m.dtype) if m.is_complex() else diagonal
    return lower + lower.mH + diagonal.diag_embed()


def _square_or_tall_backward(q, r, grad_q, grad_r):
    from ember.native.linalg.solve import solve

    middle = r @ grad_r.mH - grad_q.mH @ q
    b = grad_q + q @ _copyltu(middle)
    return solve(r, b.mH).mH  # b R^-H, as the solution of R gA^H = b^H


@complex_formula
def _qr_backward(ctx, grad_q, grad_r):
    from ember.native.shape.shape import cat

    (q, r) = ctx.saved_outputs
    m, n = q.shape[-2], r.shape[-1]
    if ctx.attrs["mode"] == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    grad_q = q * 0 if grad_q is None else grad_q
    grad_r = r * 0 if grad_r is None else grad_r
    if m >= n:
        return (_square_or_tall_backward(q, r, grad_q, grad_r),)
    # Wide: A = [X | Y] with X = Q U square; Y = Q V only moves Q's gradient.
    square, rest = r[..., :, :m], r[..., :, m:]
    grad_square, grad_rest = grad_r[..., :, :m], grad_r[..., :, m:]
    grad_x = _square_or_tall_backward(q, square, grad_q + (q @ rest) @ grad_rest.mH, grad_square)
    return (cat([grad_x, q @ grad_rest], -1),)


QR = Op("aten::linalg_qr", _qr_kernel, _qr_backward, promote=NONE, save="outputs", num_outputs=2,
        backward_name="LinalgQrBackward0")


def qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q R`` (see the module docstring for ``mode``).

    >>> import ember
    >>> Q, R = ember.linalg.qr(ember.tensor([[3., 1.], [4., 2.]]))
    >>> R
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    (A,) = composite_inputs("linalg_qr", A)  # on autocast's fp32 list
    check_matrix(A, "linalg.qr")
    check_floating(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    q, r = QR(A, mode="reduced" if mode == "r" else mode)
    if mode == "r":
        from ember.native.factory import empty

        return return_types_qr(empty(0, dtype=A.dtype, device=A.device), r.detach())
    return return_types_qr(q, r)
