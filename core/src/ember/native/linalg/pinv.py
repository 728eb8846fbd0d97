"""The pseudo-inverse and least squares: ``linalg.pinv`` and ``linalg.lstsq``.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``linalg_pinv``),
BatchLinearAlgebra.cpp (``linalg_lstsq``) and ``pinv_backward`` in
torch/csrc/autograd/FunctionsManual.cpp (v2.13).

``pinv`` comes from the SVD (from ``eigh`` of the lower triangle with
``hermitian=True``), dropping singular values below ``rtol * max(S)`` (``rtol``
defaults to eps * max(m, n)). Its gradient is PyTorch's closed form, valid where the
rank does not change. ``lstsq`` returns the minimum-norm solution of min ||A X - B||,
computed and differentiated as ``pinv(A) @ B``; ``residuals`` and ``singular_values``
are empty and ``rank`` is the numerical rank, as with PyTorch's default CPU driver
(``gelsy``); the other drivers return what PyTorch's do (NOTE [ lstsq's drivers ]).
"""

import collections

from ember.amp.state import autocast_state, composite_inputs, suspended
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix

return_types_lstsq = collections.namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])


def _pinv_kernel(xp, a, rtol, hermitian=False):
    m, n = a.shape[-2:]
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    if rtol is None:
        rtol = xp.finfo(a.dtype).eps * max(m, n)
    # hermitian: eigenvalues of the lower triangle stand in for the singular values (PyTorch's eigh path).
    return xp.linalg.pinv(a, rcond=rtol, hermitian=hermitian).astype(a.dtype)


@complex_formula
def _pinv_backward(ctx, grad):
    # in PyTorch's convention, with conjugate transposes (NOTE [ Complex gradients ] in autograd/graph.py)
    (a,) = ctx.saved_inputs
    (p,) = ctx.saved_outputs
    m, n = a.shape[-2], a.shape[-1]
    p_t, grad_t = p.mH, grad.mH
    if m <= n:
        k = grad_t @ p
        k_p_t = k @ p_t
        return (-(p @ k).mH + k_p_t - (a @ p) @ k_p_t + (p_t @ p) @ (grad_t - k @ a),)
    k = p @ grad_t
    p_t_k = p_t @ k
    return (-(k @ p).mH + (grad_t - a @ k) @ p @ p_t + p_t_k - p_t_k @ p @ a,)


PINV = Op("aten::linalg_pinv", _pinv_kernel, _pinv_backward, promote=NONE, save="both",
          backward_name="LinalgPinvBackward0")


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of each matrix in ``A``.

    >>> import ember
    >>> ember.linalg.pinv(ember.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    check_matrix(A, "linalg.pinv")
    check_floating(A, "linalg.pinv")
    if atol is not None:
        raise NotImplementedError("ember's linalg.pinv takes rtol only (atol is PyTorch's too, not ember's yet)")
    return PINV(A, rtol=rtol, hermitian=True) if hermitian else PINV(A, rtol=rtol)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of ``A X = B`` (minimum norm where A is rank
    deficient), with PyTorch's named tuple.

    >>> import ember
    >>> ember.linalg.lstsq(ember.tensor([[1., 0.], [0., 1.], [0., 0.]]), ember.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.],
            [2.]])
    """
    A, B = composite_inputs("linalg_lstsq", A, B)  # on autocast's fp32 list
    if autocast_state.enabled:  # cast by its policy: the products inside it are not cast again
        with suspended():
            return lstsq(A, B, rcond, driver=driver)
    from ember.dtypes import int64
    from ember.native.factory import empty, tensor
    from ember.native.linalg.svd import svdvals

    check_matrix(A, "linalg.lstsq")
    check_floating(A, "linalg.lstsq")
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError("ember.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.shape[-2] != A.shape[-2]:
        raise RuntimeError("ember.linalg.lstsq: input.size(-2) should match other.size(-2)")
    solution = PINV(A, rtol=rcond) @ rhs
    none = empty(0, dtype=A.dtype, device=A.device)
    # What each LAPACK driver reports (NOTE [ lstsq's drivers ]).
    ranks = _rank(A, rcond)
    rank = empty(0, dtype=int64, device=A.device) if driver == "gels" else tensor(ranks, device=A.device)
    real_none = none.abs() if none.is_complex() else none
    singular_values = svdvals(A.detach()) if driver in ("gelsd", "gelss") else real_none
    m, n = A.shape[-2:]
    residuals = solution.reshape(-1)[:0]  # empty, but an output of the graph like PyTorch's
    residuals = residuals.abs() if residuals.is_complex() else residuals  # real, as PyTorch's
    if driver in ("gels", "gelsd", "gelss") and m > n and bool((ranks == n).all()):
        residuals = (A @ solution - rhs).abs().square().sum(-2)  # a vector B keeps its one column: (1,)
    return return_types_lstsq(solution.squeeze(-1) if vector else solution, residuals, rank, singular_values)


# NOTE [ lstsq's drivers ]
# ember solves every driver's problem the same way (pinv(A) @ B); what differs is what
# PyTorch returns beside the solution: gels no rank (an empty tensor), gelsd and gelss
# the singular values of A, and gels, gelsd and gelss the residuals (the squared column
# norms of A X - B) where A is tall and of full rank. gelsy, the default, returns the
# rank only.


def _rank(A, rcond):
    import numpy as np

    host = A.detach()._host()
    if host.size == 0:
        return np.zeros(host.shape[:-2], dtype=np.int64)
    singular = np.linalg.svd(host, compute_uv=False)
    tolerance = (np.finfo(host.dtype).eps * max(host.shape[-2:]) if rcond is None else rcond) * singular[..., :1]
    return (singular > tolerance).sum(-1).astype(np.int64)
