"""Bessel functions: ``i0`` (and ``special.i0e i1 i1e``), with gradients, and the
``special.bessel_*``, ``modified_bessel_*``, ``scaled_modified_bessel_*``,
``spherical_bessel_j0`` and ``airy_ai`` functions, without.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp (i0, special_i0e, special_i1,
special_i1e, special_bessel_j0, ...), the kernels in aten/src/ATen/native/Math.h and
their entries in tools/autograd/derivatives.yaml (v2.13).

The derivatives of the modified Bessel functions of the first kind are each other:
``i0' = i1``, ``i1' = i0 - i1 / x`` (1/2 at 0), and for the exponentially scaled ones
``i0e(x) = exp(-|x|) i0(x)`` the derivative of the scale joins in. PyTorch gives the
other Bessel functions no derivative: their outputs do not require grad, so their ops
here have no backward either.
"""

from ember.native.indexing.indexing import where
from ember.native.pointwise.special_kernels import floating_op, special, special_kernel
from ember.native.pointwise.unary import _x, _y, sign

# --- with gradients ----------------------------------------------------------------------


def _i1_backward(ctx, grad):
    x, i1_x = _x(ctx), _y(ctx)
    return (grad * where(x == 0, 0.5, i0(x) - i1_x / x),)


def _i1e_backward(ctx, grad):
    x, i1e_x = _x(ctx), _y(ctx)
    return (grad * where(x == 0, 0.5, i0e(x) - i1e_x * (sign(x) + 1 / x)),)


I0 = floating_op("i0", special_kernel("i0"), lambda ctx, g: (g * i1(_x(ctx)),))
I0E = floating_op("special_i0e", special_kernel("i0e"), lambda ctx, g: (g * (i1e(_x(ctx)) - sign(_x(ctx)) * _y(ctx)),),
                  save="both")
I1 = floating_op("special_i1", special_kernel("i1"), _i1_backward, save="both")
I1E = floating_op("special_i1e", special_kernel("i1e"), _i1e_backward, save="both")


def i0(input):
    """The modified Bessel function of the first kind of order 0, ``I_0``.

    >>> import ember
    >>> ember.i0(ember.tensor([0.0, 1.0, 2.0]))
    tensor([1.0000, 1.2661, 2.2796])
    """
    return I0(input)


def i0e(input):
    """The exponentially scaled ``I_0``: ``exp(-|x|) * i0(x)``."""
    return I0E(input)


def i1(input):
    """The modified Bessel function of the first kind of order 1, ``I_1``."""
    return I1(input)


def i1e(input):
    """The exponentially scaled ``I_1``: ``exp(-|x|) * i1(x)``."""
    return I1E(input)


# --- without gradients (as in PyTorch) ---------------------------------------------------


def _spherical_j0_kernel(xp, a):
    return special(xp).spherical_jn(0, a).astype(a.dtype, copy=False)


def _airy_ai_kernel(xp, a):
    return special(xp).airy(a)[0].astype(a.dtype, copy=False)


def _no_grad_op(name, kernel):
    return floating_op(name, kernel, None, save=None)


BESSEL_J0 = _no_grad_op("special_bessel_j0", special_kernel("j0"))
BESSEL_J1 = _no_grad_op("special_bessel_j1", special_kernel("j1"))
BESSEL_Y0 = _no_grad_op("special_bessel_y0", special_kernel("y0"))
BESSEL_Y1 = _no_grad_op("special_bessel_y1", special_kernel("y1"))
MODIFIED_BESSEL_I0 = _no_grad_op("special_modified_bessel_i0", special_kernel("i0"))
MODIFIED_BESSEL_I1 = _no_grad_op("special_modified_bessel_i1", special_kernel("i1"))
MODIFIED_BESSEL_K0 = _no_grad_op("special_modified_bessel_k0", special_kernel("k0"))
MODIFIED_BESSEL_K1 = _no_grad_op("special_modified_bessel_k1", special_kernel("k1"))
SCALED_MODIFIED_BESSEL_K0 = _no_grad_op("special_scaled_modified_bessel_k0", special_kernel("k0e"))
SCALED_MODIFIED_BESSEL_K1 = _no_grad_op("special_scaled_modified_bessel_k1", special_kernel("k1e"))
SPHERICAL_BESSEL_J0 = _no_grad_op("special_spherical_bessel_j0", _spherical_j0_kernel)
AIRY_AI = _no_grad_op("special_airy_ai", _airy_ai_kernel)


def bessel_j0(input):
    """The Bessel function of the first kind of order 0, ``J_0``.

    >>> import ember
    >>> ember.special.bessel_j0(ember.tensor([0.0, 1.0]))
    tensor([1.0000, 0.7652])
    """
    return BESSEL_J0(input)


def bessel_j1(input):
    """The Bessel function of the first kind of order 1, ``J_1``."""
    return BESSEL_J1(input)


def bessel_y0(input):
    """The Bessel function of the second kind of order 0, ``Y_0`` (NaN below 0)."""
    return BESSEL_Y0(input)


def bessel_y1(input):
    """The Bessel function of the second kind of order 1, ``Y_1`` (NaN below 0)."""
    return BESSEL_Y1(input)


def modified_bessel_i0(input):
    """``I_0``, as ``i0`` but without a gradient (PyTorch's separate op)."""
    return MODIFIED_BESSEL_I0(input)


def modified_bessel_i1(input):
    """``I_1``, as ``special.i1`` but without a gradient."""
    return MODIFIED_BESSEL_I1(input)


def modified_bessel_k0(input):
    """The modified Bessel function of the second kind of order 0, ``K_0``."""
    return MODIFIED_BESSEL_K0(input)


def modified_bessel_k1(input):
    """The modified Bessel function of the second kind of order 1, ``K_1``."""
    return MODIFIED_BESSEL_K1(input)


def scaled_modified_bessel_k0(input):
    """``exp(x) * K_0(x)``."""
    return SCALED_MODIFIED_BESSEL_K0(input)


def scaled_modified_bessel_k1(input):
    """``exp(x) * K_1(x)``."""
    return SCALED_MODIFIED_BESSEL_K1(input)


def spherical_bessel_j0(input):
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x``."""
    return SPHERICAL_BESSEL_J0(input)


def airy_ai(input):
    """The Airy function ``Ai``."""
    return AIRY_AI(input)
