"""The Gaussian error linear unit, exact (erf) and tanh-approximated, as one fused op.

PyTorch counterpart: ``GeluKernelImpl``/``GeluBackwardKernelImpl`` in
aten/src/ATen/native/cpu/Activation.cpp, ``gelu`` in torch/nn/functional.py and
``gelu_backward``'s entry in tools/autograd/derivatives.yaml (v2.13).

``gelu(x) = x * Phi(x)`` with Phi the standard normal CDF. The tanh form replaces
Phi(x) by ``(1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2`` (Hendrycks & Gimpel).
The kernels below are the formulas; float32 NumPy arrays take the fast CDF of
gelu_fast.py instead of ``erf`` (``_fast_path``, one fixed rule).
"""

import math

import numpy as np

from ember.native.pointwise.unary import _special
from ember_activation import gelu_fast
from ember_activation._pointwise import define

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
CUBIC = 0.044715
APPROXIMATIONS = ("none", "tanh")


def _fast_path(xp, *arrays):
    """The one rule that picks gelu_fast.py: float32 NumPy arrays (NOTE [ A fast normal
    CDF for float32 ] there); everything else computes the definition below."""
    return xp is np and all(a.dtype == np.float32 for a in arrays)


def _normal_cdf(xp, x):
    """``Phi(x) = (1 + erf(x / sqrt(2))) / 2`` in ``x``'s dtype, a fresh array."""
    if _fast_path(xp, x):
        return gelu_fast.blockwise(x, cdf_only=True)
    return (0.5 * (1 + _special(xp).erf(x * INV_SQRT_2))).astype(x.dtype, copy=False)


def _gelu_kernel(xp, x, *, approximate):
    if approximate == "tanh":
        inner = (x + CUBIC * x * x * x) * SQRT_2_OVER_PI
        return 0.5 * x * (1 + xp.tanh(inner))
    if _fast_path(xp, x):
        return gelu_fast.blockwise(x)
    return (x * _normal_cdf(xp, x)).astype(x.dtype, copy=False)


def _gelu_backward_kernel(xp, grad, x, *, approximate):
    if approximate == "tanh":
        t = xp.tanh((x + CUBIC * x * x * x) * SQRT_2_OVER_PI)
        inner_slope = SQRT_2_OVER_PI * (1 + 3 * CUBIC * x * x)
        return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner_slope)
    if _fast_path(xp, grad, x) and grad.shape == x.shape:
        return gelu_fast.blockwise(x, grad)
    pdf = xp.exp(-0.5 * x * x) * INV_SQRT_2PI
    return (grad * (_normal_cdf(xp, x) + x * pdf)).astype(grad.dtype, copy=False)


def _gelu_second_derivative(x, *, approximate):
    if approximate == "tanh":
        # With u = k (x + c x^3) and t = tanh(u): f'' = (1 - t^2) (u' - x t u'^2 + x u'' / 2).
        t = ((x + CUBIC * x * x * x) * SQRT_2_OVER_PI).tanh()
        u1 = (1 + 3 * CUBIC * x * x) * SQRT_2_OVER_PI
        u2 = x * (6 * CUBIC * SQRT_2_OVER_PI)
        return (1 - t * t) * (u1 - x * t * u1 * u1 + 0.5 * x * u2)
    # f' = Phi + x phi and phi' = -x phi, so f'' = phi (2 - x^2).
    pdf = (-0.5 * x * x).exp() * INV_SQRT_2PI
    return pdf * (2 - x * x)


GELU, GELU_BACKWARD = define("gelu", _gelu_kernel, _gelu_backward_kernel, _gelu_second_derivative,
                             kernel_name="GeluKernelImpl")


def gelu(input, approximate="none"):
    """``x * Phi(x)``, Phi the standard normal CDF; ``approximate="tanh"`` uses the tanh formula.

    Args:
        approximate: ``"none"`` (erf) or ``"tanh"``.

    >>> import ember
    >>> gelu(ember.tensor([-1., 0., 1.]))
    tensor([-0.1587,  0.0000,  0.8413])
    """
    if approximate not in APPROXIMATIONS:
        raise RuntimeError("approximate argument must be either none or tanh.")
    return GELU(input, approximate=approximate)


OPS = (GELU, GELU_BACKWARD)
