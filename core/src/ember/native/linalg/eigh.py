"""Eigen-decomposition of symmetric matrices: ``linalg.eigh`` (values ascending and
orthonormal vectors) and ``linalg.eigvalsh`` (values only).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_eigh``) and
``linalg_eig_backward`` (its Hermitian case) in torch/csrc/autograd/FunctionsManual.cpp
(v2.13).

Only one triangle of A is read (``UPLO="L"``: the lower one, PyTorch's default). The
signs of the eigenvectors are LAPACK's. Gradient, with E_ij = L_j - L_i:
gA = V [diag(gL) + skew(V^T gV) / (2 E)] V^T (skew(X) = X - X^T), which needs distinct
eigenvalues, as PyTorch's does.
"""

import collections

from ember.amp.state import composite_inputs
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square

return_types_eigh = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])


def _eigh_kernel(xp, a, uplo):
    if a.size == 0:
        return xp.zeros(a.shape[:-1], dtype=a.dtype), xp.zeros(a.shape, dtype=a.dtype)
    values, vectors = xp.linalg.eigh(a, UPLO=uplo)
    return values.astype(a.dtype), vectors


def _eigh_backward(ctx, grad_values, grad_vectors):
    from ember.native.factory import eye

    values, vectors = ctx.saved_outputs
    inner = grad_values.diag_embed() if grad_values is not None else 0.0
    if grad_vectors is not None:
        n = values.shape[-1]
        identity = eye(n, dtype=values.dtype, device=values.device)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + identity
        vhgv = vectors.mT @ grad_vectors
        inner = inner + (vhgv - vhgv.mT) / (2 * gaps) * (1 - identity)
    return (vectors @ inner @ vectors.mT,)


EIGH = Op("aten::linalg_eigh", _eigh_kernel, _eigh_backward, promote=NONE, save="outputs", num_outputs=2,
          backward_name="LinalgEighBackward0")


def _check(A, name, UPLO):
    check_square(A, name)
    check_floating(A, name)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of symmetric ``A``: values ascending, vectors in
    the columns.

    >>> import ember
    >>> ember.linalg.eigh(ember.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([1., 2.])
    """
    (A,) = composite_inputs("linalg_eigh", A)  # on autocast's fp32 list
    _check(A, "linalg.eigh", UPLO)
    return return_types_eigh(*EIGH(A, uplo=UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of symmetric ``A``, ascending."""
    (A,) = composite_inputs("linalg_eigvalsh", A)  # on autocast's fp32 list
    _check(A, "linalg.eigvalsh", UPLO)
    return EIGH(A, uplo=UPLO)[0]
