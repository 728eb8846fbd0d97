"""``ember.special``: the special functions of SciPy's kind, PyTorch's ``torch.special``.

PyTorch counterpart: torch/special/__init__.py (v2.13).

Every name here is the function that computes it elsewhere in ember (one kernel per
function): the error, gamma and Bessel families in ember/native/pointwise/
(``error_functions.py``, ``gamma.py``, ``bessel.py``, ``orthogonal_polynomials.py``),
and aliases of the top-level ops (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``,
``psi`` is ``digamma``, ``softmax`` is ``ember.softmax``...). The reference kernels
call ``scipy.special``, which wraps the same Cephes routines PyTorch's Math.h follows.
"""

from ember.native.pointwise.bessel import (
                                           airy_ai,
                                           bessel_j0,
                                           bessel_j1,
                                           bessel_y0,
                                           bessel_y1,
                                           i0,
                                           i0e,
                                           i1,
                                           i1e,
                                           modified_bessel_i0,
                                           modified_bessel_i1,
                                           modified_bessel_k0,
                                           modified_bessel_k1,
                                           scaled_modified_bessel_k0,
                                           scaled_modified_bessel_k1,
                                           spherical_bessel_j0,
)
from ember.native.pointwise.error_functions import erfcx, log_ndtr, ndtr, ndtri
from ember.native.pointwise.gamma import digamma, gammainc, gammaincc, multigammaln, polygamma, psi, zeta
from ember.native.pointwise.gamma import lgamma as gammaln
from ember.native.pointwise.log_space import logit
from ember.native.pointwise.orthogonal_polynomials import (
                                           chebyshev_polynomial_t,
                                           chebyshev_polynomial_u,
                                           chebyshev_polynomial_v,
                                           chebyshev_polynomial_w,
                                           hermite_polynomial_h,
                                           hermite_polynomial_he,
                                           laguerre_polynomial_l,
                                           legendre_polynomial_p,
                                           shifted_chebyshev_polynomial_t,
                                           shifted_chebyshev_polynomial_u,
                                           shifted_chebyshev_polynomial_v,
                                           shifted_chebyshev_polynomial_w,
)
from ember.native.pointwise.trigonometric import sinc
from ember.native.pointwise.unary import erf, erfc, erfinv, exp2, expm1, log1p, round
from ember.native.pointwise.unary import sigmoid as expit
from ember.native.pointwise.xlogy import entr, xlog1py, xlogy
from ember.native.reduction.reduction import logsumexp
from ember.native.softmax import log_softmax, softmax

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
