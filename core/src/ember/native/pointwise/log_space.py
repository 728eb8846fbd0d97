"""Arithmetic on logarithms: ``logaddexp logaddexp2`` and the log-odds ``logit``
(``special.expit``, its inverse, is ``sigmoid``).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (logaddexp, logaddexp2),
UnaryOps.cpp (logit), their kernels and their entries in tools/autograd/derivatives.yaml
(v2.13).

``logaddexp(a, b) = log(exp(a) + exp(b))`` is computed as ``max + log1p(exp(-|a - b|))``
(as NumPy's ufunc does, in whole-array passes), which overflows for no finite input. Its gradient is a
softmax of the two: ``1 / (1 + exp(b - a))`` for ``a``.
"""

import math

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import DEFAULT, Op
from ember.native.pointwise.binary import _elementwise, require_tensors
from ember.native.pointwise.special_kernels import floating_op
from ember.native.pointwise.unary import exp, exp2, not_implemented_for, quiet

# --- logaddexp, logaddexp2 ---------------------------------------------------------------


def _logaddexp_kernel(name, log_of_two, exp, log1p):
    # max + log1p(exp(-|a - b|)), in whole-array passes (NumPy's logaddexp ufunc is a
    # scalar loop, 30x slower); where a == b (both inf, say) the difference is NaN and
    # the answer is a + log(2).
    def kernel(xp, a, b):
        if a.dtype.kind in "biu":
            raise not_implemented_for(f"{name}_cpu", a.dtype)
        larger = _elementwise("maximum")(xp, a, b)
        result = larger + log1p(xp, exp(xp, -xp.abs(a - b)))
        return xp.where(a == b, a + a.dtype.type(log_of_two), result)
    return quiet(kernel)


def _logaddexp_backward(power):
    def backward(ctx, grad):
        a, b = ctx.saved_inputs
        need_a, need_b = ctx.needs_input_grad
        return (grad / (1 + power(b - a)) if need_a else None), (grad / (1 + power(a - b)) if need_b else None)
    return backward


LOGADDEXP = Op("aten::logaddexp", _logaddexp_kernel("logaddexp", math.log(2), lambda xp, d: xp.exp(d),
                                                   lambda xp, e: xp.log1p(e)),
               _logaddexp_backward(exp), promote=DEFAULT, save="inputs", jvp=AUTO_ELEMENT_WISE)
LOGADDEXP2 = Op("aten::logaddexp2", _logaddexp_kernel("logaddexp2", 1.0, lambda xp, d: xp.exp2(d),
                                                      lambda xp, e: xp.log1p(e) * e.dtype.type(1 / math.log(2))),
                _logaddexp_backward(exp2), promote=DEFAULT, save="inputs", jvp=AUTO_ELEMENT_WISE)


def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, without overflow.

    >>> import ember
    >>> ember.logaddexp(ember.tensor([1000.0, 0.0]), ember.tensor([1000.0, 0.0]))
    tensor([1.0007e+03, 6.9315e-01])
    """
    require_tensors("logaddexp", input, other)
    return LOGADDEXP(input, other)


def logaddexp2(input, other):
    """``log2(2**input + 2**other)``, without overflow.

    >>> import ember
    >>> ember.logaddexp2(ember.tensor([3.0, 0.0]), ember.tensor([3.0, 0.0]))
    tensor([4., 1.])
    """
    require_tensors("logaddexp2", input, other)
    return LOGADDEXP2(input, other)


# --- logit ----------------------------------------------------------------------------------


def _logit_kernel(xp, a, eps=None):
    if eps is not None:
        a = xp.clip(a, a.dtype.type(eps), a.dtype.type(1 - eps))
    return xp.log(a / (1 - a))


def _logit_backward(ctx, grad):
    # 1 / (x (1 - x)) inside the domain; outside it (below eps or above 1 - eps when eps
    # clamps the input, outside [0, 1] when it does not) 0, or NaN, as in PyTorch.
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    eps = ctx.attrs.get("eps")
    lo, hi, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)
    return (where((x < lo) | (x > hi), outside, grad / (x * (1 - x))),)


LOGIT = floating_op("logit", _logit_kernel, _logit_backward)


def logit(input, eps=None):
    """The log-odds ``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to
    ``[eps, 1 - eps]`` (and the gradient is 0 outside it).

    >>> import ember
    >>> ember.logit(ember.tensor([0.25, 0.5, 1.0]), eps=1e-6)
    tensor([-1.0986,  0.0000, 13.8023])
    """
    return LOGIT(input) if eps is None else LOGIT(input, eps=float(eps))
