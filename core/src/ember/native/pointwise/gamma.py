"""The gamma family: ``lgamma digamma polygamma mvlgamma``, the regularized incomplete
gamma functions ``igamma igammac`` and Hurwitz's ``zeta``.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp (lgamma, digamma, polygamma,
mvlgamma), BinaryOps.cpp (igamma, igammac, special_zeta), the kernels in
aten/src/ATen/native/Math.h and their entries in tools/autograd/derivatives.yaml (v2.13).

Each derivative is the next function of the family: ``lgamma' = digamma``,
``digamma' = polygamma(1, .)``, ``polygamma(n, .)' = polygamma(n + 1, .)``; so the
gradients of every order are these ops again. Integer and bool inputs become the
default float dtype (igamma and igammac have float kernels only, as in PyTorch).
"""

import math

from ember.dispatcher import DEFAULT, INT_TO_FLOAT, Op
from ember.native.pointwise.binary import require_tensors
from ember.native.pointwise.special_kernels import floating_op, special, special_kernel
from ember.native.pointwise.unary import _x, exp, log, not_implemented_for, quiet

# --- lgamma, digamma, polygamma --------------------------------------------------------

def _lgamma_kernel(xp, a):
    # log |Gamma(-inf)| is +inf in PyTorch (SciPy's gammaln says -inf).
    result = special(xp).gammaln(a).astype(a.dtype, copy=False)
    return xp.where(a == -xp.inf, a.dtype.type(xp.inf), result)


LGAMMA = floating_op("lgamma", _lgamma_kernel, lambda ctx, g: (g * digamma(_x(ctx)),))
DIGAMMA = floating_op("digamma", special_kernel("psi"), lambda ctx, g: (g * polygamma(1, _x(ctx)),))


def _polygamma_kernel(xp, a, n):
    if n == 1:
        return _trigamma(xp, a)
    return special(xp).polygamma(n, a).astype(a.dtype, copy=False)


# NOTE [ trigamma in the input's precision ]
# digamma's derivative, polygamma(1, x), is what every digamma and lgamma backward
# evaluates. PyTorch computes it in the input's own dtype with a short recipe: reflect x
# below 1/2 (psi1(x) = pi**2 / sin(pi x)**2 - psi1(1 - x)), step x up six times with
# psi1(x) = psi1(x + 1) + 1/x**2, then sum the asymptotic series. In float32 that is a few
# ulps from the true value (1377.0603 for 1377.0507 at x = -3.973), and SciPy's float64
# result rounded once is closer to the truth than to torch: ember follows the recipe, so
# float32 gradients are torch's to an ulp or two (NumPy's float32 sin is not glibc's).
def _trigamma(xp, a):
    one = a.dtype.type(1)
    pi = a.dtype.type(math.pi)
    reflect = a < a.dtype.type(0.5)
    sin_pi_x = xp.sin(pi * a)
    result = xp.where(reflect, -(pi * pi) / (sin_pi_x * sin_pi_x), a.dtype.type(0))
    x = xp.where(reflect, one - a, a)
    for _ in range(6):
        result = result + one / (x * x)
        x = x + one
    ixx = one / (x * x)
    series = ixx * (a.dtype.type(1 / 6) - ixx * (a.dtype.type(1 / 30) - ixx * a.dtype.type(1 / 42)))
    result = result + (one + one / (a.dtype.type(2) * x) + series) / x
    return xp.where(reflect, -result, result)


def _polygamma_backward(ctx, grad):
    return (grad * polygamma(ctx.attrs["n"] + 1, _x(ctx)),)


POLYGAMMA = floating_op("polygamma", _polygamma_kernel, _polygamma_backward)


def lgamma(input):
    """``log |Gamma(input)|``; +inf at the poles 0, -1, -2, ...

    >>> import ember
    >>> ember.lgamma(ember.tensor([0.5, 1.0, 4.0]))
    tensor([0.5724, 0.0000, 1.7918])
    """
    return LGAMMA(input)


def digamma(input):
    """``d/dx log Gamma(x)``, the digamma function (-inf at 0, NaN at the negative
    integers, as in PyTorch).

    >>> import ember
    >>> ember.digamma(ember.tensor([1.0, 0.5]))
    tensor([-0.5772, -1.9635])
    """
    return DIGAMMA(input)


psi = digamma


def polygamma(n, input):
    """The ``n``-th derivative of the digamma function (``n = 0`` is digamma itself).

    >>> import ember
    >>> ember.polygamma(1, ember.tensor([1.0, 2.0]))
    tensor([1.6449, 0.6449])
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return POLYGAMMA(input, n=int(n))


def polygamma_method(self, n):
    """``Tensor.polygamma(n)``: the method puts the tensor first."""
    return polygamma(n, self)


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``:
    ``p (p - 1) / 4 * log(pi) + sum_{j < p} lgamma(input - j / 2)``.

    Built from ``lgamma``, so its gradient (``sum_j digamma(input - j / 2)``) comes
    from lgamma's.

    >>> import ember
    >>> ember.mvlgamma(ember.tensor([2.5, 3.0]), p=2)
    tensor([0.8570, 1.5502])
    """
    from ember.native.factory import arange

    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        input = input.to(_default_float())
    halves = arange(p, dtype=input.dtype, device=input.device) * -0.5
    return lgamma(input.unsqueeze(-1) + halves).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


multigammaln = mvlgamma


def _default_float():
    from ember.dtypes import get_default_dtype

    return get_default_dtype()


# --- the incomplete gamma functions -------------------------------------------------------


def _incomplete_gamma_kernel(function, name):
    def kernel(xp, a, x):
        if a.dtype.kind in "biu":
            raise not_implemented_for(f"{name}_cpu", a.dtype)
        return getattr(special(xp), function)(a, x).astype(a.dtype, copy=False)
    return quiet(kernel)


def _incomplete_gamma_backward(sign):
    # d/dx P(a, x) = x**(a - 1) exp(-x) / Gamma(a); Q = 1 - P. None for `a`, as in PyTorch.
    def backward(ctx, grad):
        a, x = ctx.saved_inputs
        need_a, need_x = ctx.needs_input_grad
        if need_a:
            raise RuntimeError("the derivative for 'igamma: input' is not implemented.")
        return None, sign * grad * exp((a - 1) * log(x) - x - lgamma(a))
    return backward


IGAMMA = Op("aten::igamma", _incomplete_gamma_kernel("gammainc", "igamma"), _incomplete_gamma_backward(1),
            promote=DEFAULT, save="inputs")
IGAMMAC = Op("aten::igammac", _incomplete_gamma_kernel("gammaincc", "igammac"), _incomplete_gamma_backward(-1),
             promote=DEFAULT, save="inputs")


def igamma(input, other):
    """The regularized lower incomplete gamma function
    ``P(a, x) = 1 / Gamma(a) * integral_0^x t**(a - 1) exp(-t) dt``, ``a = input``.

    >>> import ember
    >>> ember.igamma(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
    tensor([0.6321, 0.2642])
    """
    require_tensors("igamma", input, other)
    return IGAMMA(input, other)


def igammac(input, other):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    >>> import ember
    >>> ember.igammac(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
    tensor([0.3679, 0.7358])
    """
    require_tensors("igammac", input, other)
    return IGAMMAC(input, other)


gammainc, gammaincc = igamma, igammac


# --- zeta ----------------------------------------------------------------------------------


def _zeta_backward(ctx, grad):
    x, q = ctx.saved_inputs
    need_x, need_q = ctx.needs_input_grad
    if need_x:
        raise RuntimeError("the derivative for 'zeta' is not implemented.")
    return None, grad * -x * zeta(x + 1.0, q)


ZETA = Op("aten::special_zeta", quiet(special_kernel("zeta")), _zeta_backward, promote=INT_TO_FLOAT,
          save="inputs", opmath=True)


def zeta(input, other):
    """Hurwitz's zeta function ``sum_{k >= 0} (k + other) ** -input`` (Riemann's for
    ``other = 1``); either argument may be a number, not both.

    >>> import ember
    >>> ember.special.zeta(ember.tensor([2.0, 4.0]), 1.0)
    tensor([1.6449, 1.0823])
    """
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        raise TypeError(f"special_zeta() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    if not hasattr(input, "_data"):  # a number first: as a 0-d tensor, so the kernel sees an array
        from ember.native.factory import scalar_tensor

        input = scalar_tensor(input, dtype=other.dtype if other.dtype.is_floating_point else None,
                              device=other.device)
    return ZETA(input, other)
