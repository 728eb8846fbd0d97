"""Eigen-decomposition of general square matrices: ``linalg.eig`` (eigenvalues and
eigenvectors) and ``linalg.eigvals`` (eigenvalues only), complex always.

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_eig``,
``linalg_eigvals``) and ``linalg_eig_backward`` in torch/csrc/autograd/FunctionsManual.cpp
(v2.13).

A real matrix may have complex eigenvalues, so both functions return complex tensors
whatever A's dtype (complex64 for float32, complex128 for float64), as PyTorch does;
NumPy returns a real array when every eigenvalue happens to be real, so the kernel
casts. Both libraries call LAPACK's ``geev``, which scales each eigenvector to unit
norm with its largest component real: the same vectors up to rounding.
"""

import collections

from ember.amp.state import composite_inputs
from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square

return_types_eig = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])

# NOTE [ The gradient of eig ]
# Eigenvectors are unique only up to a complex factor each: geev fixes |v| = 1,
# which still leaves a phase e^{i phi} per vector. A loss that changes under that
# phase is not a function of A, so PyTorch refuses it: the phase's derivative shows
# up as the imaginary part of diag(V^H gV), which must vanish (up to 1e-2,
# PyTorch's tolerance). For a loss that passes, with E_ij = L_j - L_i off the
# diagonal (distinct eigenvalues needed, as PyTorch's), the gradient in PyTorch's
# convention (NOTE [ Complex gradients ] in autograd/graph.py) is
#     gA = V^-H [diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)] V^H
# where the second term, off its diagonal, undoes the unit-norm gauge; its diagonal
# is replaced by gL. A real A keeps the real part (engine._conform).
_GAUGE_TOLERANCE = 1e-2


def _eig_kernel(xp, a):
    dtype = xp.result_type(a.dtype, xp.complex64)
    if a.size == 0:
        return xp.zeros(a.shape[:-1], dtype=dtype), xp.zeros(a.shape, dtype=dtype)
    if not xp.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    values, vectors = xp.linalg.eig(a)
    return values.astype(dtype), vectors.astype(dtype)


def check_gauge(vhgv_diagonal, name):
    """Refuse a loss that depends on the eigenvectors' phases (NOTE [ The gradient of eig ])."""
    if not vhgv_diagonal.is_complex():
        return
    if bool((vhgv_diagonal.imag.abs() > _GAUGE_TOLERANCE).any()):
        raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                           "so it is ill-defined.")


@complex_formula
def _eig_backward(ctx, grad_values, grad_vectors):
    from ember.native.factory import eye, zeros_like
    from ember.native.linalg.solve import SOLVE

    values, vectors = ctx.saved_outputs
    vectors_h = vectors.mH
    if grad_vectors is None:
        inner = grad_values.diag_embed()
    else:
        vhgv = vectors_h @ grad_vectors
        diagonal = vhgv.diagonal(0, -2, -1)
        check_gauge(diagonal, "linalg_eig_backward")
        identity = eye(values.shape[-1], dtype=values.dtype, device=values.device)
        gaps = (values.unsqueeze(-2) - values.unsqueeze(-1)).conj() + identity
        inner = (vhgv - vectors_h @ (vectors * diagonal.real.unsqueeze(-2))) / gaps * (1 - identity)
        inner = inner + (zeros_like(values) if grad_values is None else grad_values).diag_embed()
    return (SOLVE(vectors_h, inner @ vectors_h),)


EIG = Op("aten::linalg_eig", _eig_kernel, _eig_backward, promote=NONE, save="outputs", num_outputs=2,
         backward_name="LinalgEigBackward0")


def _check(A, name):
    check_square(A, name)
    check_floating(A, name)


def eig(A):
    """``(eigenvalues, eigenvectors)`` of square ``A``, complex: ``A V = V diag(L)``,
    each column of V of unit norm.

    >>> import ember
    >>> ember.linalg.eig(ember.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([2.+0.j, 1.+0.j])
    """
    (A,) = composite_inputs("linalg_eig", A)  # on autocast's fp32 list
    _check(A, "linalg.eig")
    return return_types_eig(*EIG(A))


def eigvals(A):
    """The eigenvalues of square ``A``, complex, in LAPACK's order."""
    (A,) = composite_inputs("linalg_eigvals", A)  # on autocast's fp32 list
    _check(A, "linalg.eigvals")
    return EIG(A)[0]
