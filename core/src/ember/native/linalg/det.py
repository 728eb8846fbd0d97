"""Determinants: ``linalg.det`` and ``linalg.slogdet`` (sign and log of the absolute value).

PyTorch counterpart: aten/src/ATen/native/BatchLinearAlgebra.cpp (``linalg_det``,
``linalg_slogdet``) and their derivatives.yaml entries (v2.13).

Gradients: d det(A) = det(A) A^-T, d log|det A| = A^-T (through ``linalg.inv``, so they
differentiate again). Where the computed determinant is exactly zero, PyTorch's gradient
is zero (det(A) times anything), not the cofactor matrix that is the true derivative;
ember gives PyTorch's zeros. ``slogdet``'s log|det| has no gradient there (``inv``
raises its ``LinAlgError``).

NOTE [ slogdet of a complex matrix ]
For complex A the sign is det / |det| (a unit complex number) and log|det| is real.
With w = tr(A^-1 dA) = d log det, d log|det| = Re w and d angle = Im w, so a loss with
gradients gl (of log|det|) and gs (of the sign, s = e^{i angle}, ds = i s d angle) has
gA = (gl + i Im(conj(s) gs)) A^-H, in PyTorch's convention (NOTE [ Complex gradients ]
in autograd/graph.py); for real A the sign is constant and gA = gl A^-T.
"""

import collections

from ember.autograd.graph import complex_formula
from ember.dispatcher import NONE, Op
from ember.native.linalg.checks import check_floating, check_square

return_types_slogdet = collections.namedtuple("slogdet", ["sign", "logabsdet"])


def _det_backward(ctx, grad):
    from ember.native.factory import eye
    from ember.native.indexing.indexing import where
    from ember.native.linalg.solve import inv

    (a,) = ctx.saved_inputs
    (det,) = ctx.saved_outputs
    singular = (det == 0).unsqueeze(-1).unsqueeze(-1)
    if bool(singular.any()):  # PyTorch's gradient there is grad * 0 * (anything): zeros
        a = where(singular, eye(a.shape[-1], dtype=a.dtype, device=a.device), a)
    return ((grad * det).unsqueeze(-1).unsqueeze(-1) * inv(a).mT,)


DET = Op("aten::linalg_det", lambda xp, a: xp.linalg.det(a), _det_backward, promote=NONE, save="both",
         backward_name="LinalgDetBackward0")


def det(A):
    """The determinant of each square matrix in ``A``.

    >>> import ember
    >>> ember.linalg.det(ember.tensor([[1., 2.], [3., 4.]]))
    tensor(-2.)
    """
    check_square(A, "linalg.det")
    check_floating(A, "linalg.det")
    return DET(A)


def _slogdet_kernel(xp, a):
    sign, logabsdet = xp.linalg.slogdet(a)
    return sign.astype(a.dtype), logabsdet.astype(xp.empty(0, dtype=a.dtype).real.dtype)


@complex_formula
def _slogdet_backward(ctx, grad_sign, grad_logabsdet):
    from ember.native.linalg.solve import inv

    (a,) = ctx.saved_inputs
    sign, _ = ctx.saved_outputs
    scale = 0.0 if grad_logabsdet is None else grad_logabsdet
    if a.is_complex() and grad_sign is not None:  # the angle's part (NOTE [ slogdet of a complex matrix ])
        scale = scale + 1j * (sign.conj() * grad_sign).imag
    if not isinstance(scale, float):
        scale = scale.unsqueeze(-1).unsqueeze(-1)
    return (scale * inv(a).mH,)


SLOGDET = Op("aten::linalg_slogdet", _slogdet_kernel, _slogdet_backward, promote=NONE, save="both",
             num_outputs=2, backward_name="LinalgSlogdetBackward0")


def slogdet(A):
    """``(sign, log|det A|)`` of each square matrix: the determinant without overflow.

    >>> import ember
    >>> ember.linalg.slogdet(ember.tensor([[1., 2.], [3., 4.]]))
    slogdet(sign=tensor(-1.), logabsdet=tensor(0.6931))
    """
    check_square(A, "linalg.slogdet")
    check_floating(A, "linalg.slogdet")
    return return_types_slogdet(*SLOGDET(A))
