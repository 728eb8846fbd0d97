"""The trigonometric functions unary.py lacks: ``asinh acosh atanh`` (and their
``arc*`` aliases), ``deg2rad rad2deg`` and ``sinc``.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp (asinh, acosh, atanh,
deg2rad, rad2deg, sinc) and their entries in tools/autograd/derivatives.yaml (v2.13).

All are "floating" ops: integer and bool inputs become the default float dtype.
"""

import math

from ember.native.pointwise.special_kernels import floating_op
from ember.native.pointwise.unary import _x, cos, rsqrt, sin

# --- inverse hyperbolic -------------------------------------------------------------

ASINH = floating_op("asinh", lambda xp, a: xp.arcsinh(a), lambda ctx, g: (g * rsqrt(_x(ctx) * _x(ctx) + 1),))
ACOSH = floating_op("acosh", lambda xp, a: xp.arccosh(a), lambda ctx, g: (g * rsqrt(_x(ctx) * _x(ctx) - 1),))
ATANH = floating_op("atanh", lambda xp, a: xp.arctanh(a), lambda ctx, g: (g / (1 - _x(ctx) * _x(ctx)),))


def asinh(input):
    """Inverse hyperbolic sine, ``log(x + sqrt(x**2 + 1))``; its gradient is
    ``1 / sqrt(x**2 + 1)``.

    >>> import ember
    >>> ember.asinh(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8814])
    """
    return ASINH(input)


def acosh(input):
    """Inverse hyperbolic cosine on ``[1, inf)`` (NaN below 1); its gradient is
    ``1 / sqrt(x**2 - 1)``.

    >>> import ember
    >>> ember.acosh(ember.tensor([1.0, 2.0]))
    tensor([0.0000, 1.3170])
    """
    return ACOSH(input)


def atanh(input):
    """Inverse hyperbolic tangent on ``(-1, 1)`` (+-inf at +-1, NaN outside); its
    gradient is ``1 / (1 - x**2)``.

    >>> import ember
    >>> ember.atanh(ember.tensor([0.0, 0.5]))
    tensor([0.0000, 0.5493])
    """
    return ATANH(input)


arcsinh, arccosh, arctanh = asinh, acosh, atanh


# --- angles ---------------------------------------------------------------------------

_RADIANS_PER_DEGREE = math.pi / 180
DEG2RAD = floating_op("deg2rad", lambda xp, a: a * a.dtype.type(_RADIANS_PER_DEGREE),
                      lambda ctx, g: (g * _RADIANS_PER_DEGREE,), save=None)
RAD2DEG = floating_op("rad2deg", lambda xp, a: a * a.dtype.type(1 / _RADIANS_PER_DEGREE),
                      lambda ctx, g: (g * (1 / _RADIANS_PER_DEGREE),), save=None)


def deg2rad(input):
    """Degrees to radians, ``input * pi / 180``.

    >>> import ember
    >>> ember.deg2rad(ember.tensor([180.0, 90.0]))
    tensor([3.1416, 1.5708])
    """
    return DEG2RAD(input)


def rad2deg(input):
    """Radians to degrees, ``input * 180 / pi``.

    >>> import ember
    >>> ember.rad2deg(ember.tensor([3.14159265, -1.5707963]))
    tensor([180., -90.])
    """
    return RAD2DEG(input)


# --- sinc -------------------------------------------------------------------------------


def _sinc_kernel(xp, a):
    angle = a * a.dtype.type(math.pi)
    return xp.where(a == 0, a.dtype.type(1), xp.sin(angle) / angle)


def _sinc_backward(ctx, grad):
    # d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x**2), 0 at x = 0.
    x = _x(ctx)
    angle = x * math.pi
    slope = (angle * cos(angle) - sin(angle)) / (angle * x)
    return (grad * slope.masked_fill(x == 0, 0.0),)


SINC = floating_op("sinc", _sinc_kernel, _sinc_backward)


def sinc(input):
    """The normalized sinc function, ``sin(pi x) / (pi x)``, 1 at ``x = 0``.

    >>> import ember
    >>> ember.sinc(ember.tensor([0.0, 0.5, -0.5]))
    tensor([1.0000, 0.6366, 0.6366])
    """
    return SINC(input)
