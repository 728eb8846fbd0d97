"""Gamma and Dirichlet samples, with their reparameterisation gradients:
``_standard_gamma``, ``_sample_dirichlet``, ``_standard_gamma_grad``, ``_dirichlet_grad``.

PyTorch counterpart: ``_s_gamma_cpu`` and ``_s_dirichlet_cpu`` in
aten/src/ATen/native/Distributions.cpp, ``sample_gamma`` in
aten/src/ATen/native/Distributions.h, and the ``_standard_gamma``/``_sample_dirichlet``
entries of tools/autograd/derivatives.yaml (v2.13).

The samplers follow torch's CPU kernels draw for draw (NOTE [ Marsaglia-Tsang as torch
draws it ]), so after ``manual_seed`` ``ember._standard_gamma`` gives torch's numbers.
The gradients differ in method, not in meaning (NOTE [ Implicit reparameterisation ]).
"""

import math

import numpy as np

from ember.native.random.transformations import _unit_interval, normal_scalar
from ember.random import generator_or_default

# NOTE [ Marsaglia-Tsang as torch draws it ]
# A Gamma(alpha, 1) sample, alpha >= 1: with d = alpha - 1/3 and c = 1/sqrt(9d), draw a
# standard normal x until y = 1 + c x > 0, then u uniform; accept d y^3 if
# u < 1 - 0.0331 x^4 (the quick squeeze) or log u < x^2/2 + d (1 - v + log v) with
# v = y^3. For alpha < 1 it samples Gamma(alpha + 1) and multiplies by U^(1/alpha).
# torch draws each uniform from 53 bits of one 64-bit word and each normal from its
# scalar double Box-Muller with the cached second value (ember's `normal_scalar`), one
# element after another in row-major order. Its arithmetic is double except where the
# C++ source names float constants: `1.0f / alpha`, `alpha + 1.0f` and
# `alpha - 1.0f / 3.0f` are computed in the input's type (float32 for a float tensor),
# and 1/3 and 0.0331 enter as the float32 numbers nearest them. ember repeats each of
# these roundings; without them one sample in a few thousand takes another branch.

_ONE_THIRD_F32 = float(np.float32(1.0) / np.float32(3.0))
_SQUEEZE_F32 = float(np.float32(0.0331))


def _sample_one_gamma(alpha, np_dtype, generator):
    """One Gamma(alpha, 1) draw, torch's sample_gamma for an input of ``np_dtype``."""
    alpha = np_dtype(alpha)
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        u = float(_unit_interval(generator, 1, np.float64)[0])
        scale *= math.pow(1.0 - u, float(np_dtype(1.0) / alpha))
        alpha = np_dtype(alpha + np_dtype(1.0))
    d = float(alpha - np_dtype(_ONE_THIRD_F32))
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = float(normal_scalar(generator, 1)[0])
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - float(_unit_interval(generator, 1, np.float64)[0])
        xx = x * x
        if u < 1.0 - _SQUEEZE_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_samples(alpha_host, np_dtype, generator):
    """Gamma(alpha, 1) draws for every element, row-major, at least the dtype's tiny."""
    tiny = np.finfo(np_dtype).tiny
    flat = [max(tiny, np_dtype(_sample_one_gamma(a, np_dtype, generator))) for a in alpha_host.reshape(-1)]
    return np.array(flat, dtype=np_dtype).reshape(alpha_host.shape)


# NOTE [ Implicit reparameterisation ]
# A Gamma sample x = F^-1(u; alpha) depends on alpha through the CDF F = P(alpha, x)
# (the regularised incomplete gamma function): holding u fixed,
#     dx/dalpha = -(dF/dalpha) / (dF/dx) = -(dP/dalpha) / pdf(x; alpha).
# torch evaluates this with series and asymptotic approximations chosen by the size of
# alpha and x (a few parts in 1e4 at worst); ember's reference computes dP/dalpha by a
# central difference of scipy's P (about 1e-9 relative), so the two gradients agree to
# torch's approximation error, not to the last bit. A Dirichlet sample's marginal x_i is
# Beta(alpha_i, total - alpha_i); torch's Dirichlet gradient is this Beta's dx/dalpha_i
# at fixed beta_i = total - alpha_i (raising alpha_i raises the total by as much), which
# ember computes in the same way from the regularised incomplete beta function.


def _relative_step(alpha):
    return np.maximum(alpha, 1e-3) * 1e-5


def standard_gamma_grad_host(alpha, x):
    """dx/dalpha for x ~ Gamma(alpha, 1) at fixed CDF level (float64 arrays)."""
    from scipy import special

    with np.errstate(all="ignore"):
        h = _relative_step(alpha)
        dcdf = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
        log_pdf = (alpha - 1) * np.log(x) - x - special.gammaln(alpha)
        return -dcdf / np.exp(log_pdf)


def dirichlet_grad_host(x, alpha, total):
    """torch's ``_dirichlet_grad``: dx/dalpha for x ~ Beta(alpha, beta) with beta = total - alpha
    held fixed, at fixed CDF level, divided by 1 - x (the Dirichlet backward multiplies by
    ``grad - sum(x * grad)``, which puts the factor 1 - x back on x's own entry)."""
    from scipy import special

    beta = total - alpha
    with np.errstate(all="ignore"):
        h = _relative_step(alpha)
        dcdf = (special.betainc(alpha + h, beta, x) - special.betainc(alpha - h, beta, x)) / (2 * h)
        log_pdf = (alpha - 1) * np.log(x) + (beta - 1) * np.log1p(-x) - special.betaln(alpha, beta)
        return -dcdf / np.exp(log_pdf) / (1 - x)


def _as_tensor(array, like):
    from ember.native.factory import _finish

    return _finish(np.ascontiguousarray(array.astype(like.dtype.np, copy=False)), like.dtype, like.device, False)


def _check_floating(alpha, name):
    if not alpha.dtype.is_floating_point:
        from ember.native.support._inplace import _type_name

        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(alpha.dtype)}'")


def _standard_gamma_grad(self, output):
    """The reparameterisation gradient dx/dalpha of Gamma(alpha, 1) samples ``output``."""
    grad = standard_gamma_grad_host(self._host().astype(np.float64), output._host().astype(np.float64))
    return _as_tensor(grad, output)


def _dirichlet_grad(x, alpha, total):
    """The reparameterisation gradient of each marginal Beta(alpha, total - alpha) sample ``x``."""
    grad = dirichlet_grad_host(x._host().astype(np.float64), alpha._host().astype(np.float64),
                               total._host().astype(np.float64))
    return _as_tensor(grad, x)


def _standard_gamma(self, generator=None):
    """Gamma(self, 1) samples, one per element (torch's numbers after ``manual_seed``);
    differentiable with respect to ``self`` (NOTE [ Implicit reparameterisation ])."""
    _check_floating(self, "gamma_cpu")
    return _StandardGamma.apply(self, generator)


def _sample_dirichlet(self, generator=None):
    """Dirichlet(self) samples over the last dimension: gamma draws in float64, normalised."""
    _check_floating(self, "dirichlet")
    g = generator_or_default(generator)
    gammas = _gamma_samples(self._host().astype(np.float64), np.float64, g)
    np_dtype = self.dtype.np.type
    ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(np_dtype)
    largest_below_one = np.nextafter(np_dtype(1.0), np_dtype(0.0))
    return _as_tensor(np.clip(ratio, np.finfo(np_dtype).tiny, largest_below_one), self)


def _make_standard_gamma():
    from ember.autograd.function import Function

    class StandardGamma(Function):
        @staticmethod
        def forward(ctx, alpha, generator):
            g = generator_or_default(generator)
            sample = _as_tensor(_gamma_samples(alpha._host(), alpha.dtype.np.type, g), alpha)
            ctx.save_for_backward(alpha, sample)
            return sample

        @staticmethod
        def backward(ctx, grad):
            alpha, sample = ctx.saved_tensors
            return grad * _standard_gamma_grad(alpha, sample), None

    return StandardGamma


_StandardGamma = _make_standard_gamma()
