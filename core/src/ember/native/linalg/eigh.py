"""Eigen-decomposition of symmetric matrices: ``linalg.eigh`` (values ascending and
orthonormal vectors) and ``linalg.eigvalsh`` (values only).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_eigh``) and
``linalg_eig_backward`` (its Hermitian case) in torch/csrc/autograd/FunctionsManual.cpp
(v2.13).

Only one triangle of A is read (``UPLO="L"``: the lower one, PyTorch's default). The
signs (phases) of the eigenvectors are LAPACK's; the eigenvalues are real for a
complex (Hermitian) A too. Gradient, with E_ij = L_j - L_i, in PyTorch's convention
(NOTE [ Complex gradients ] in autograd/graph.py):
gA = V [diag(gL) + skew(V^H gV) / (2 E)] V^H (skew(X) = X - X^H), which needs distinct
eigenvalues, as PyTorch's does; a loss that depends on the vectors' phases is refused
as for ``eig`` (NOTE [ The gradient of eig ] in eig.py).
"""

import collections

from ember.amp.state import composite_inputs
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square
from ember.native.linalg.eig import check_gauge

return_types_eigh = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])


def _eigh_kernel(xp, a, uplo):
    real = xp.empty(0, dtype=a.dtype).real.dtype  # the eigenvalues of a Hermitian matrix are real
    if a.size == 0:
        return xp.zeros(a.shape[:-1], dtype=real), xp.zeros(a.shape, dtype=a.dtype)
    values, vectors = xp.linalg.eigh(a, UPLO=uplo)
    return values.astype(real), vectors


@complex_formula
def _eigh_backward(ctx, grad_values, grad_vectors):
    from ember.native.factory import eye

    values, vectors = ctx.saved_outputs
    vectors_h = vectors.mH
    if grad_vectors is None:
        inner = grad_values.diag_embed().to(vectors.dtype)
    else:
        vhgv = vectors_h @ grad_vectors
        check_gauge(vhgv.diagonal(0, -2, -1), "linalg_eigh_backward")
        identity = eye(values.shape[-1], dtype=values.dtype, device=values.device)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + identity
        inner = (vhgv - vhgv.mH) / (2 * gaps)
        if grad_values is not None:  # the diagonal becomes gL
            inner = inner * (1 - identity) + grad_values.diag_embed()
    return (vectors @ inner @ vectors_h,)


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
