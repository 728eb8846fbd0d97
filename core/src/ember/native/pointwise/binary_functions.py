"""Two-input math functions: ``pow float_power atan2 maximum minimum fmax fmin lerp
hypot heaviside`` and their aliases (the arithmetic operators are in binary.py).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (atan2, maximum, minimum,
fmax, fmin, hypot, heaviside), Pow.cpp, Lerp.cpp and their entries in
tools/autograd/derivatives.yaml (v2.13).

As in binary.py, operands are promoted before the kernel runs, backward formulas are
written with ember ops, and errors are PyTorch's.
"""

import math

from ember import dtypes
from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import DEFAULT, INT_TO_FLOAT, Op
from ember.native.pointwise.binary import _dtype_of, _elementwise, _reraise, require_tensors
from ember.native.pointwise.special_kernels import not_differentiable
from ember.native.pointwise.unary import not_implemented_for, quiet

# --- pow ------------------------------------------------------------------------


@quiet
def _pow_kernel(xp, a, b):
    dtype = _dtype_of(a, b)
    if dtype.kind == "b":
        if not hasattr(b, "dtype"):  # bool ** True is the tensor, bool ** False all True
            return a.copy() if b else xp.ones_like(a)
        raise not_implemented_for("pow", dtype)
    try:
        return xp.power(a, b)
    except ValueError as error:
        if "negative integer powers" not in str(error):
            _reraise(error, a, b)
        if not hasattr(b, "dtype"):
            raise RuntimeError("Integers to negative integer powers are not allowed.") from None
        return _integer_pow_with_negative_exponents(xp, a, b)


def _integer_pow_with_negative_exponents(xp, a, b):
    # PyTorch truncates 1 / a**n for integers: 1 for a == 1, -1 or 1 for a == -1
    # (by the parity of n), 0 for every other base (0 included).
    negative = b < 0
    result = xp.power(a, xp.where(negative, 0, b).astype(b.dtype, copy=False))
    odd = xp.remainder(b, 2) == 1
    inverse = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
    return xp.where(negative, inverse, result).astype(result.dtype, copy=False)


def _pow_backward(ctx, grad):
    from ember.native.indexing.indexing import where
    from ember.native.pointwise.comparison import eq, ge, logical_and
    from ember.native.pointwise.unary import log

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
            if base == 0:
                # 0 ** y is 0 for y > 0 and 1 for y == 0; PyTorch takes the gradient as 0 there.
                grad_exp = where(ge(exponent, 0), 0.0, grad * result * float("-inf"))
            else:
                grad_exp = grad * result * (math.log(base) if base > 0 else float("nan"))
        else:
            # d/dy x**y = x**y * log(x); PyTorch defines it as 0 where x == 0 and y >= 0.
            safe = where(logical_and(eq(base, 0), ge(exponent, 0)), 1.0, base)
            grad_exp = grad * result * log(safe)
    return grad_base, grad_exp


POW = Op("aten::pow", _pow_kernel, _pow_backward, elementwise="tensors", promote=DEFAULT, save="both",
         jvp=AUTO_ELEMENT_WISE)


_INTEGERS = frozenset(d for d in dtypes.ALL_DTYPES if d.category < dtypes.FLOATING)


def pow(input, exponent):
    """``input ** exponent``; either may be a Python number.

    >>> import ember
    >>> ember.pow(ember.tensor([1.0, 2.0, 3.0]), 2)
    tensor([1., 4., 9.])
    >>> ember.pow(2, ember.tensor([0, 1, 2]))
    tensor([1, 2, 4])
    """
    exponent = dtypes.python_number(exponent)  # np.int64(300) is 300 (NOTE in dtypes.py)
    if exponent.__class__ is int and exponent < 0 and getattr(input, "dtype", None) in _INTEGERS:
        # Checked before the exponent wraps into the tensor's dtype (uint8 ** -1 would be ** 255).
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if exponent.__class__ is int and getattr(input, "dtype", None) in _INTEGERS:
        dtypes.checked_int(exponent, input._data.dtype)  # PyTorch converts the exponent with its overflow check
    return POW(input, exponent)


def float_power(input, exponent):
    """``pow`` computed in float64, whatever the inputs' dtypes."""
    def as_double(x):
        return x.double() if hasattr(x, "_data") else float(x)

    return POW(as_double(input), as_double(exponent))


# --- atan2, maximum, minimum, fmax, fmin ------------------------------------------


@quiet
def _atan2_kernel(xp, a, b):
    try:
        return xp.arctan2(a, b)
    except ValueError as error:
        _reraise(error, a, b)


def _atan2_backward(ctx, grad):
    from ember.native.indexing.indexing import where

    a, b = ctx.saved_inputs
    denom = a * a + b * b
    # At (0, 0) PyTorch takes the gradient as 0 (signed as the other input), not 0/0:
    # it zeroes 1 / denom there; the second derivative there is still NaN, as in PyTorch.
    recip = where(denom == 0, 0.0, denom.reciprocal())
    need_a, need_b = ctx.needs_input_grad
    return (grad * b * recip if need_a else None), (grad * -a * recip if need_b else None)


ATAN2 = Op("aten::atan2", _atan2_kernel, _atan2_backward, elementwise=True, promote=INT_TO_FLOAT, save="inputs",
           jvp=AUTO_ELEMENT_WISE)


def atan2(input, other):
    """Elementwise arctangent of ``input / other`` with the quadrant from both signs.

    >>> import ember
    >>> ember.atan2(ember.tensor([1.0, -1.0]), ember.tensor([-1.0, -1.0]))
    tensor([ 2.3562, -2.3562])
    """
    require_tensors("atan2", input, other)
    return ATAN2(input, other)


arctan2 = atan2


def _maximum_backward(ctx, grad):
    # Ties share the gradient; where either is NaN (so is the result) both get it all.
    return _split_grad(ctx, grad, lambda a, b: a < b, lambda a, b: a > b)


def _minimum_backward(ctx, grad):
    return _split_grad(ctx, grad, lambda a, b: a > b, lambda a, b: a < b)


def _split_grad(ctx, grad, a_loses, b_loses):
    from ember.native.indexing.indexing import where

    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    shared = where(a == b, grad / 2, grad)
    return (where(a_loses(a, b), 0.0, shared) if need_a else None), \
           (where(b_loses(a, b), 0.0, shared) if need_b else None)


def _fmax_backward(ctx, grad):
    # fmax picks `input` on ties and where `other` is NaN; the pick gets the whole gradient.
    return _pick_grad(ctx, grad, lambda a, b: (a >= b) | b.isnan())


def _fmin_backward(ctx, grad):
    return _pick_grad(ctx, grad, lambda a, b: (a <= b) | b.isnan())


def _pick_grad(ctx, grad, picks_a):
    from ember.native.indexing.indexing import where

    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    first = picks_a(a, b)
    return (where(first, grad, 0.0) if need_a else None), (where(first, 0.0, grad) if need_b else None)


MAXIMUM = Op("aten::maximum", quiet(_elementwise("maximum")), _maximum_backward, promote=DEFAULT, save="inputs",
             elementwise=True, jvp=AUTO_ELEMENT_WISE)
MINIMUM = Op("aten::minimum", quiet(_elementwise("minimum")), _minimum_backward, promote=DEFAULT, save="inputs",
             elementwise=True, jvp=AUTO_ELEMENT_WISE)
FMAX = Op("aten::fmax", quiet(_elementwise("fmax")), _fmax_backward, promote=DEFAULT, save="inputs",
          elementwise=True, jvp=AUTO_ELEMENT_WISE)
FMIN = Op("aten::fmin", quiet(_elementwise("fmin")), _fmin_backward, promote=DEFAULT, save="inputs",
          elementwise=True, jvp=AUTO_ELEMENT_WISE)


def maximum(input, other):
    """Elementwise maximum; NaN propagates.

    >>> import ember
    >>> ember.maximum(ember.tensor([1.0, 5.0]), ember.tensor([3.0, float("nan")]))
    tensor([3., nan])
    """
    require_tensors("maximum", input, other)
    return MAXIMUM(input, other)


def minimum(input, other):
    """Elementwise minimum; NaN propagates."""
    require_tensors("minimum", input, other)
    return MINIMUM(input, other)


def fmax(input, other):
    """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> import ember
    >>> ember.fmax(ember.tensor([1.0, 5.0]), ember.tensor([3.0, float("nan")]))
    tensor([3., 5.])
    """
    require_tensors("fmax", input, other)
    return FMAX(input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN."""
    require_tensors("fmin", input, other)
    return FMIN(input, other)


# --- lerp -------------------------------------------------------------------------


@quiet
def _lerp_kernel(xp, start, end, weight):
    try:
        # From the nearer end, as PyTorch does: exact at weight 0 and 1.
        diff = end - start
        if not hasattr(weight, "dtype"):
            return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
        return xp.where(xp.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))
    except ValueError as error:
        _reraise(error, start, end, weight)


def _lerp_backward(ctx, grad):
    start, end, weight = ctx.saved_inputs
    need_start, need_end, need_weight = ctx.needs_input_grad
    return ((grad * (1 - weight) if need_start else None),
            (grad * weight if need_end else None),
            (grad * (end - start) if need_weight else None))


LERP = Op("aten::lerp", _lerp_kernel, _lerp_backward, elementwise="tensors", promote=DEFAULT, save="inputs",
          opmath=True, jvp=AUTO_ELEMENT_WISE)


def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``; ``input`` and ``end`` are
    floating tensors of one dtype, ``weight`` a number or a tensor.

    >>> import ember
    >>> ember.lerp(ember.tensor([0.0, 10.0]), ember.tensor([10.0, 20.0]), 0.5)
    tensor([ 5., 15.])
    """
    require_tensors("lerp", input, end)
    kind = "tensor" if hasattr(weight, "_data") else "scalar"
    if not input.dtype.is_floating_point:
        raise not_implemented_for(f"lerp_kernel_{kind}", input._data.dtype)
    for name, x in (("end", end), ("weight", weight)):
        if hasattr(x, "_data") and x.dtype is not input.dtype and (name == "end" or x.ndim > 0):
            raise RuntimeError(f"expected dtype {_c_name(input.dtype)} for `{name}` but got dtype "
                               f"{_c_name(x.dtype)}")
    return LERP(input, end, weight)


def _c_name(dtype):
    # PyTorch names dtypes by their C++ type in this message.
    return dtypes.C_TYPE_NAMES[dtype.name]


# --- hypot, heaviside -------------------------------------------------------------------------


def _hypot_kernel(xp, a, b):
    if a.dtype.kind in "biu":
        raise not_implemented_for("hypot_cpu", a.dtype)
    return _elementwise("hypot")(xp, a, b)


def _hypot_backward(ctx, grad):
    a, b = ctx.saved_inputs
    (result,) = ctx.saved_outputs
    need_a, need_b = ctx.needs_input_grad
    return (grad * a / result if need_a else None), (grad * b / result if need_b else None)


HYPOT = Op("aten::hypot", quiet(_hypot_kernel), _hypot_backward, promote=DEFAULT, save="both", jvp=AUTO_ELEMENT_WISE)


def hypot(input, other):
    """``sqrt(input**2 + other**2)``, without overflow; floating inputs only.

    >>> import ember
    >>> ember.hypot(ember.tensor([3.0, 5.0]), ember.tensor([4.0, 12.0]))
    tensor([ 5., 13.])
    """
    require_tensors("hypot", input, other)
    return HYPOT(input, other)


def _heaviside_kernel(xp, a, values):
    # where(x == 0, values, x > 0): NaN counts as not above 0 (0), as in PyTorch.
    return xp.where(a == 0, values, a > 0).astype(a.dtype, copy=False)


HEAVISIDE = Op("aten::heaviside", _heaviside_kernel, not_differentiable("heaviside"), promote=DEFAULT)


def heaviside(input, values):
    """The step function: 0 where ``input < 0``, 1 where ``input > 0`` and ``values``
    where ``input == 0``; both tensors of one dtype, as PyTorch requires.

    >>> import ember
    >>> ember.heaviside(ember.tensor([-1.5, 0.0, 2.0]), ember.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if not hasattr(values, "_data"):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return HEAVISIDE(input, values)
