"""The older ``torch.*`` names of linear-algebra functions, which programs still call:
``inverse``, ``det``, ``logdet``, ``slogdet``, ``matrix_exp``, ``pinverse``, ``qr``, ``svd``
(with V, not Vh) and ``cholesky_inverse``-free ``cholesky``; also Tensor methods.

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp and
BatchLinearAlgebra.cpp (``inverse``, ``logdet``, ``pinverse``, ``svd``, ``cholesky``)
(v2.13).

Each is a few lines over ember.linalg (ember/native/linalg_*.py), as in PyTorch, where
they are composites of the ``linalg`` functions.
"""

import collections

from ember.amp.state import composite_inputs
from ember.native.linalg.checks import check_floating, check_square
from ember.native.linalg.cholesky import cholesky as _cholesky
from ember.native.linalg.det import det, slogdet
from ember.native.linalg.matrix_exp import matrix_exp
from ember.native.linalg.pinv import pinv
from ember.native.linalg.solve import inv
from ember.native.linalg.svd import svd as _linalg_svd

return_types_svd = collections.namedtuple("svd", ["U", "S", "V"])
return_types_qr = collections.namedtuple("qr", ["Q", "R"])


def qr(input, some=True):
    """``linalg.qr`` under its older name: ``some=False`` is ``mode="complete"``."""
    from ember.native.linalg.qr import qr as linalg_qr

    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return return_types_qr(Q, R)


def inverse(input):
    """``linalg.inv`` under its older name."""
    return inv(input)


def logdet(input):
    """``log(det(A))``: NaN where the determinant is negative, -inf where it is zero.

    >>> import ember
    >>> ember.logdet(ember.tensor([[2., 0.], [0., 3.]]))
    tensor(1.7918)
    """
    from ember.native.indexing.indexing import where

    check_square(input, "logdet")
    check_floating(input, "logdet")
    sign, logabsdet = slogdet(input)
    if input.is_complex():  # log det = log|det| + i angle(det)
        return sign.log() + logabsdet
    return where(sign < 0, float("nan"), logabsdet)


def pinverse(input, rcond=1e-15):
    """``linalg.pinv`` with PyTorch's older default cutoff ``rcond=1e-15``."""
    (input,) = composite_inputs("pinverse", input)  # on autocast's fp32 list
    return pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (``linalg.svd`` returns Vh = V^T).

    >>> import ember
    >>> ember.svd(ember.tensor([[3., 0.], [0., 2.], [0., 0.]])).S
    tensor([3., 2.])
    """
    if not compute_uv:  # PyTorch fills U and V (full size) with zeros
        from ember.native.factory import zeros
        from ember.native.linalg.svd import svdvals

        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return return_types_svd(zeros(batch + (m, m), dtype=input.dtype, device=input.device), svdvals(input),
                                zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    u, s, vh = _linalg_svd(input, full_matrices=not some)
    return return_types_svd(u, s, vh.mH)


def cholesky(input, upper=False):
    """``linalg.cholesky`` under its older name (``upper`` positional); deprecated, with
    PyTorch's warning."""
    import warnings

    warnings.warn("ember.cholesky is deprecated in favor of ember.linalg.cholesky and will be removed in a future "
                  "release.\nL = ember.cholesky(A)\nshould be replaced with\nL = ember.linalg.cholesky(A)",
                  UserWarning, stacklevel=2)
    return _cholesky(input, upper=upper)


__all__ = ["inverse", "det", "logdet", "slogdet", "matrix_exp", "pinverse", "svd", "cholesky"]
