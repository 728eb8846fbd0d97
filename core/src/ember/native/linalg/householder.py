"""``linalg.householder_product``: the first n columns of the product of Householder
reflections ``H_1 H_2 ... H_k``, LAPACK's ``orgqr`` (how ``geqrf``'s output becomes Q).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp
(``linalg_householder_product``) and ``householder_product_backward`` in
torch/csrc/autograd/FunctionsManual.cpp (v2.13).

``H_i = I - tau_i v_i v_i^T`` where ``v_i`` is column i of A below the diagonal, with
an implicit 1 on it and zeros above. The reference multiplies the reflections out with
ember ops (one rank-1 update each), so the gradient comes from theirs.
"""


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
    reflectors = A.tril(-1) + identity[:, :n]  # column i: v_i, with its implicit 1 and zeros above
    Q = identity.expand(*A.shape[:-2], m, m)
    for i in range(k):
        v = reflectors[..., :, i:i + 1]
        # Q H_i = Q - tau_i (Q v) v^T
        Q = Q - tau[..., i, None, None] * ((Q @ v) @ v.mT)
    if k == 0:  # no reflection: the identity, recorded against A (a zero gradient), as PyTorch's
        return Q[..., :, :n] + A * 0
    return Q[..., :, :n]
