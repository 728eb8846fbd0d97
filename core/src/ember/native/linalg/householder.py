"""``linalg.householder_product``: the first n columns of the product of Householder
reflections ``H_1 H_2 ... H_k``, LAPACK's ``orgqr`` (how ``geqrf``'s output becomes Q);
``geqrf``, which makes them, and ``ormqr``, which multiplies by their product.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp
(``linalg_householder_product``, ``geqrf``, ``ormqr``) and
``householder_product_backward`` in torch/csrc/autograd/FunctionsManual.cpp (v2.13).

``H_i = I - tau_i v_i v_i^H`` where ``v_i`` is column i of A below the diagonal, with
an implicit 1 on it and zeros above. The reference forms the product as ``I - V T V^H``
(the compact WY form) with ember ops, so the gradient comes from theirs. ``geqrf`` calls
LAPACK's routine through SciPy and has no gradient, as in PyTorch.
"""

import collections

import numpy as np

from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_matrix


def householder_product(A, tau):
    """``(H_1 ... H_k)[:, :n]`` for ``A`` of shape ``(..., m, n)`` (m >= n) and ``tau``
    of shape ``(..., k)``, k <= n.

    >>> import ember
    >>> ember.linalg.householder_product(ember.tensor([[1.], [0.]]), ember.tensor([2.]))
    tensor([[-1.],
            [ 0.]])
    """
    from ember.native.factory import eye

    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(tau.shape[:-1])}")
    if A.dtype != tau.dtype:
        raise RuntimeError("torch.linalg.householder_product: tau dtype does not match input dtype")
    identity = eye(m, dtype=A.dtype, device=A.device)
    if k == 0:  # no reflection: the identity, recorded against A (a zero gradient), as PyTorch's
        return identity[:, :n].expand(*A.shape) + A * 0
    V = A[..., :, :k].tril(-1) + identity[:, :k]  # column i: v_i, with its implicit 1 and zeros above
    T = _compact_wy_factor(V, tau)
    return identity[:, :n] - V @ T @ V[..., :n, :].mH


def _compact_wy_factor(V, tau):
    """The upper triangular T with ``H_1 ... H_k = I - V T V^H`` (the compact WY form
    LAPACK's larft builds): ``T_1 = tau_1`` and, column by column,
    ``T_{i+1} = [[T_i, -tau_{i+1} T_i V_i^H v_{i+1}], [0, tau_{i+1}]]``. Products of
    k x k blocks, where multiplying the reflections out one by one would update an
    m x m matrix k times."""
    from ember.native.factory import zeros
    from ember.native.shape.shape import cat

    T = tau[..., 0:1].unsqueeze(-1)
    for i in range(1, tau.shape[-1]):
        scale = tau[..., i:i + 1].unsqueeze(-1)
        column = -scale * (T @ (V[..., :, :i].mH @ V[..., :, i:i + 1]))
        bottom = cat([zeros(*T.shape[:-2], 1, i, dtype=T.dtype, device=T.device), scale], -1)
        T = cat([cat([T, column], -1), bottom], -2)
    return T


# --- geqrf and ormqr: the QR decomposition in Householder form ----------------------------

return_types_geqrf = collections.namedtuple("geqrf", ["a", "tau"])


def _geqrf_kernel(xp, a):
    import scipy.linalg

    m, n = a.shape[-2:]
    stack = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    packed, taus = np.zeros_like(stack), np.zeros((len(stack), min(m, n)), a.dtype)
    for i, matrix in enumerate(stack):
        if matrix.size:
            (packed[i], taus[i]), _ = scipy.linalg.qr(matrix, mode="raw", check_finite=False)
    return packed.reshape(a.shape), taus.reshape(a.shape[:-2] + (min(m, n),))


GEQRF = Op("aten::geqrf", _geqrf_kernel, None, promote=NONE, num_outputs=2)


def geqrf(input):
    """LAPACK's ``geqrf``: R in the upper triangle of ``a``, the Householder vectors
    below it, and their scalars ``tau`` (``householder_product(a, tau)`` is Q).

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[3., 1.], [4., 2.]]))
    >>> a.triu()
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    check_matrix(input, "geqrf")
    check_floating(input, "geqrf")
    return return_types_geqrf(*GEQRF(input))


def ormqr(input, tau, other, left=True, transpose=False):
    """``Q @ other`` (``other @ Q`` for ``left=False``; Q^H for ``transpose``) with Q
    the full square product of the Householder reflections in ``(input, tau)``.

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[3., 1.], [4., 2.]]))
    >>> ember.ormqr(a, tau, ember.eye(2))
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    from ember.native.factory import zeros
    from ember.native.shape.shape import cat

    rows, columns = input.shape[-2], input.shape[-1]
    side = other.shape[-2] if left else other.shape[-1]
    which = -2 if left else -1
    if tau.shape[-1] != min(side, columns):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{which}], "
                           "input.shape[-1])")
    if rows != side:
        raise RuntimeError(f"torch.ormqr: other.shape[{which}] must be equal to input.shape[-2]")
    if columns < rows:
        padding = zeros(*input.shape[:-1], rows - columns, dtype=input.dtype, device=input.device)
        input = cat([input, padding], -1)
    Q = householder_product(input[..., :, :rows], tau)
    Q = Q.mH if transpose else Q  # the conjugate transpose for complex, as LAPACK's
    return Q @ other if left else other @ Q
