"""The error-function family beyond ``erf erfc erfinv`` (unary.py): the scaled
complementary error function ``erfcx`` and the standard normal distribution's
``ndtr`` (its CDF), ``ndtri`` (the inverse) and ``log_ndtr``.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp (special_erfcx, special_ndtr,
special_ndtri, special_log_ndtr), the kernels in aten/src/ATen/native/Math.h and their
entries in tools/autograd/derivatives.yaml (v2.13).

Every gradient comes from the normal density ``phi(x) = exp(-x**2 / 2) / sqrt(2 pi)``:
``ndtr' = phi``, ``ndtri' = 1 / phi(ndtri(x))``, ``log_ndtr' = phi / ndtr``, and
``erfcx(x) = exp(x**2) erfc(x)`` has ``erfcx' = 2 x erfcx(x) - 2 / sqrt(pi)``.
"""

import math

from ember.native.pointwise.special_kernels import floating_op, special_kernel
from ember.native.pointwise.unary import _x, _y, exp

_SQRT_2PI = math.sqrt(2 * math.pi)


ERFCX = floating_op("special_erfcx", special_kernel("erfcx"),
                    lambda ctx, g: (g * (2 * _x(ctx) * _y(ctx) - 2 / math.sqrt(math.pi)),), save="both")
NDTR = floating_op("special_ndtr", special_kernel("ndtr"),
                   lambda ctx, g: (g * exp(_x(ctx) * _x(ctx) * -0.5) / _SQRT_2PI,))
NDTRI = floating_op("special_ndtri", special_kernel("ndtri"),
                    lambda ctx, g: (g * _SQRT_2PI * exp(_y(ctx) * _y(ctx) * 0.5),), save="outputs")
LOG_NDTR = floating_op("special_log_ndtr", special_kernel("log_ndtr"),
                       lambda ctx, g: (g / _SQRT_2PI * exp(-(_y(ctx) + _x(ctx) * _x(ctx) / 2)),), save="both")


def erfcx(input):
    """``exp(input**2) * erfc(input)``, without the overflow of the product.

    >>> import ember
    >>> ember.special.erfcx(ember.tensor([0.0, 30.0]))
    tensor([1.0000, 0.0188])
    """
    return ERFCX(input)


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``.

    >>> import ember
    >>> ember.special.ndtr(ember.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
    """
    return NDTR(input)


def ndtri(input):
    """The inverse of ``ndtr`` on ``[0, 1]`` (-inf at 0, inf at 1).

    >>> import ember
    >>> ember.special.ndtri(ember.tensor([0.5, 0.975]))
    tensor([0.0000, 1.9600])
    """
    return NDTRI(input)


def log_ndtr(input):
    """``log(ndtr(input))``, accurate far into the left tail.

    >>> import ember
    >>> ember.special.log_ndtr(ember.tensor([0.0, -20.0]))
    tensor([  -0.6931, -203.9172])
    """
    return LOG_NDTR(input)
