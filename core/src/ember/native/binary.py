"""Elementwise binary arithmetic: ``add sub mul div floor_divide remainder pow atan2
maximum minimum lerp`` and friends.

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp, Pow.cpp, Lerp.cpp and their
entries in tools/autograd/derivatives.yaml (v2.13).

Every op promotes its operands first (see ``ember/dtypes.py``), so a kernel sees arrays
of one dtype. Backward formulas are written with ember ops and return one gradient per
input; the engine reduces gradients of broadcast inputs to the input's shape.
"""

from ember.dispatcher import DEFAULT, INT_TO_FLOAT, Op

# --- add, sub -------------------------------------------------------------------


def _add_kernel(xp, a, b, alpha=1):
    return xp.add(a, b) if alpha == 1 else xp.add(a, xp.multiply(b, alpha))


def _add_backward(ctx, grad):
    alpha = ctx.attrs.get("alpha", 1)
    return grad, (grad if alpha == 1 else grad * alpha)


ADD = Op("aten::add", _add_kernel, _add_backward, promote=DEFAULT)


def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcast and type-promoted.

    >>> import ember
    >>> ember.add(ember.tensor([1, 2]), ember.tensor([0.5, 0.5]))
    tensor([1.5000, 2.5000])
    """
    if alpha == 1:
        return ADD(input, other)
    return ADD(input, other, alpha=alpha)


def _sub_kernel(xp, a, b, alpha=1):
    if a.dtype == bool if hasattr(a, "dtype") else False:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    return xp.subtract(a, b) if alpha == 1 else xp.subtract(a, xp.multiply(b, alpha))


def _sub_backward(ctx, grad):
    alpha = ctx.attrs.get("alpha", 1)
    return grad, (-grad if alpha == 1 else grad * -alpha)


SUB = Op("aten::sub", _sub_kernel, _sub_backward, promote=DEFAULT)


def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    if alpha == 1:
        return SUB(input, other)
    return SUB(input, other, alpha=alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


# --- mul, div -------------------------------------------------------------------


def _mul_kernel(xp, a, b):
    return xp.multiply(a, b)


def _mul_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    return (grad * b if need_a else None), (grad * a if need_b else None)


MUL = Op("aten::mul", _mul_kernel, _mul_backward, promote=DEFAULT, save="inputs")


def mul(input, other):
    """Elementwise product ``input * other``."""
    return MUL(input, other)


multiply = mul


def _div_kernel(xp, a, b, rounding_mode=None):
    if rounding_mode is None:
        return xp.true_divide(a, b)
    if rounding_mode == "floor":
        return _floor_divide_kernel(xp, a, b)
    if rounding_mode == "trunc":
        q = xp.true_divide(a, b)
        return xp.trunc(q).astype(q.dtype) if a.dtype.kind == "f" else _int_trunc_div(xp, a, b)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


def _int_trunc_div(xp, a, b):
    _check_int_zero(xp, b)
    q = xp.floor_divide(a, b)
    fix = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return xp.where(fix, q + 1, q).astype(q.dtype)


def _check_int_zero(xp, b):
    if getattr(b, "dtype", None) is not None and b.dtype.kind in "iub" and bool(xp.any(b == 0)):
        raise RuntimeError("ZeroDivisionError")


def _div_backward(ctx, grad):
    if ctx.attrs.get("rounding_mode") is not None:
        return None, None
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    grad_a = grad / b if need_a else None
    grad_b = -grad * a / (b * b) if need_b else None
    return grad_a, grad_b


DIV = Op("aten::div", _div_kernel, _div_backward, promote=INT_TO_FLOAT, save="inputs")
_DIV_ROUNDED = Op("aten::div_rounding", _div_kernel, None, promote=DEFAULT, backward_name="DivBackward1")


def div(input, other, *, rounding_mode=None):
    """``input / other``; integers divide to the default float dtype unless
    ``rounding_mode`` is ``"trunc"`` or ``"floor"``."""
    if rounding_mode is None:
        return DIV(input, other)
    return _DIV_ROUNDED(input, other, rounding_mode=rounding_mode)


divide = div
true_divide = div


def _floor_divide_kernel(xp, a, b):
    if getattr(a, "dtype", None) is not None and a.dtype.kind in "iu":
        _check_int_zero(xp, b)
    return xp.floor_divide(a, b)


FLOOR_DIVIDE = Op("aten::floor_divide", _floor_divide_kernel, None, promote=DEFAULT)


def floor_divide(input, other):
    """``input // other``, rounding toward negative infinity (Python's rule)."""
    return FLOOR_DIVIDE(input, other)


def _remainder_kernel(xp, a, b):
    if getattr(a, "dtype", None) is not None and a.dtype.kind in "iu":
        _check_int_zero(xp, b)
    return xp.remainder(a, b)


def _remainder_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    return (grad if need_a else None), (-grad * floor_divide(a, b) if need_b else None)


REMAINDER = Op("aten::remainder", _remainder_kernel, _remainder_backward, promote=DEFAULT, save="inputs")


def remainder(input, other):
    """Python's ``%``: the result has the sign of ``other``."""
    return REMAINDER(input, other)


def _fmod_kernel(xp, a, b):
    return xp.fmod(a, b)


def _fmod_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    return (grad if need_a else None), (-grad * div(a, b, rounding_mode="trunc") if need_b else None)


FMOD = Op("aten::fmod", _fmod_kernel, _fmod_backward, promote=DEFAULT, save="inputs")


def fmod(input, other):
    """C's ``fmod``: the result has the sign of ``input``."""
    return FMOD(input, other)


# --- pow ------------------------------------------------------------------------


def _pow_kernel(xp, a, b):
    return xp.power(a, b)


def _pow_backward(ctx, grad):
    from ember.native.comparison import eq, ge, logical_and
    from ember.native.unary import log
    from ember.native.indexing import where

    base, exponent = ctx.saved_inputs
    need_base, need_exp = ctx.needs_input_grad
    grad_base = grad_exp = None
    if need_base:
        if isinstance(exponent, (int, float)):
            grad_base = grad * 0.0 if exponent == 0 else grad * exponent * base ** (exponent - 1)
        else:
            grad_base = where(exponent == 0, 0.0, grad * exponent * base ** (exponent - 1))
    if need_exp:
        (result,) = ctx.saved_outputs
        if isinstance(base, (int, float)):
            grad_exp = grad * result * _log_scalar(base)
        else:
            # d/dy x**y = x**y * log(x); PyTorch defines it as 0 where x == 0 and y >= 0.
            safe = where(logical_and(eq(base, 0), ge(exponent, 0)), 1.0, base)
            grad_exp = grad * result * log(safe)
    return grad_base, grad_exp


def _log_scalar(x):
    import math

    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


POW = Op("aten::pow", _pow_kernel, _pow_backward, promote=DEFAULT, save="both")


def pow(input, exponent):
    """``input ** exponent``; either may be a Python number."""
    return POW(input, exponent)


def float_power(input, exponent):
    """``pow`` computed in float64."""
    from ember import dtypes

    def as_double(x):
        return x.double() if hasattr(x, "_data") else float(x)

    del dtypes
    return POW(as_double(input), as_double(exponent))


# --- atan2, maximum, minimum, lerp ----------------------------------------------


def _atan2_kernel(xp, a, b):
    return xp.arctan2(a, b)


def _atan2_backward(ctx, grad):
    a, b = ctx.saved_inputs
    denom = a * a + b * b
    need_a, need_b = ctx.needs_input_grad
    return (grad * b / denom if need_a else None), (grad * -a / denom if need_b else None)


ATAN2 = Op("aten::atan2", _atan2_kernel, _atan2_backward, promote=INT_TO_FLOAT, save="inputs")


def atan2(input, other):
    """Elementwise arctangent of ``input / other`` with the quadrant from both signs."""
    return ATAN2(input, other)


arctan2 = atan2


def _max_min_backward(ctx, grad, pick_first):
    from ember.native.indexing import where

    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    # Ties share the gradient equally, as PyTorch does.
    half = grad / 2
    first = pick_first(a, b)
    grad_a = where(a == b, half, where(first, grad, 0.0)) if need_a else None
    grad_b = where(a == b, half, where(first, 0.0, grad)) if need_b else None
    return grad_a, grad_b


MAXIMUM = Op("aten::maximum", lambda xp, a, b: xp.maximum(a, b),
             lambda ctx, grad: _max_min_backward(ctx, grad, lambda a, b: a > b),
             promote=DEFAULT, save="inputs")
MINIMUM = Op("aten::minimum", lambda xp, a, b: xp.minimum(a, b),
             lambda ctx, grad: _max_min_backward(ctx, grad, lambda a, b: a < b),
             promote=DEFAULT, save="inputs")


def maximum(input, other):
    """Elementwise maximum; NaN propagates."""
    return MAXIMUM(input, other)


def minimum(input, other):
    """Elementwise minimum; NaN propagates."""
    return MINIMUM(input, other)


def fmax(input, other):
    """Elementwise maximum that ignores NaN."""
    return FMAX(input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN."""
    return FMIN(input, other)


FMAX = Op("aten::fmax", lambda xp, a, b: xp.fmax(a, b),
          lambda ctx, grad: _max_min_backward(ctx, grad, lambda a, b: (a > b) | b.isnan()),
          promote=DEFAULT, save="inputs")
FMIN = Op("aten::fmin", lambda xp, a, b: xp.fmin(a, b),
          lambda ctx, grad: _max_min_backward(ctx, grad, lambda a, b: (a < b) | b.isnan()),
          promote=DEFAULT, save="inputs")


def _lerp_kernel(xp, start, end, weight):
    return start + weight * (end - start)


def _lerp_backward(ctx, grad):
    start, end, weight = ctx.saved_inputs
    need_start, need_end, need_weight = ctx.needs_input_grad
    return ((grad * (1 - weight) if need_start else None),
            (grad * weight if need_end else None),
            (grad * (end - start) if need_weight else None))


LERP = Op("aten::lerp", _lerp_kernel, _lerp_backward, promote=DEFAULT, save="inputs")


def lerp(input, end, weight):
    """``input + weight * (end - input)``."""
    return LERP(input, end, weight)
