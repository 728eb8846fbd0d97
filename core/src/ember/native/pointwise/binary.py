"""Elementwise binary arithmetic: ``add sub mul div floor_divide remainder fmod`` and
their aliases, with the helpers every two-input op shares (``pow atan2 maximum minimum
fmax fmin lerp`` are in binary_functions.py).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp and its entries in
tools/autograd/derivatives.yaml (v2.13).

Every op promotes its operands first (see ``ember/dtypes.py``), so a kernel sees arrays
of one dtype (and Python scalars, which NumPy and CuPy treat as "weak"). Backward
formulas are written with ember ops and return one gradient per input; the engine
reduces gradients of broadcast inputs to the input's shape.

Errors are PyTorch's: shapes that do not broadcast, integer division by zero, integers
to negative integer powers and kernels PyTorch does not have for bool or integers
raise the same exception type with a message in PyTorch's words. The kernels check
for them after NumPy has failed, or only on the integer path, so the float hot path
pays nothing.
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import DEFAULT, INT_TO_FLOAT, Op
from ember.dtypes import checked_int, is_floating_array, python_number
from ember.native.pointwise.unary import not_implemented_for, quiet
from ember.tensor import Tensor


def broadcast_error(*operands):
    """PyTorch's error for operands whose shapes do not broadcast, or None if they do."""
    shapes = [tuple(getattr(x, "shape", ())) for x in operands]
    result = shapes[0]
    for shape in shapes[1:]:
        ndim = max(len(result), len(shape))
        left = (1,) * (ndim - len(result)) + result
        right = (1,) * (ndim - len(shape)) + shape
        for dim in reversed(range(ndim)):
            if left[dim] != right[dim] and left[dim] != 1 and right[dim] != 1:
                return RuntimeError(f"The size of tensor a ({left[dim]}) must match the size of tensor b "
                                    f"({right[dim]}) at non-singleton dimension {dim}")
        result = tuple(r if l == 1 else l for l, r in zip(left, right))
    return None


def _reraise(error, *operands):
    """Turn NumPy's broadcasting ValueError into PyTorch's RuntimeError."""
    if isinstance(error, ValueError):
        mismatch = broadcast_error(*operands)
        if mismatch is not None:
            raise mismatch from None
    raise error


def _dtype_of(a, b):
    """The computation dtype: that of whichever operand is an array."""
    return a.dtype if hasattr(a, "dtype") else b.dtype


def _wrap_integers(xp, a, b):
    """Python ints beyond the integer dtype's range wrap around into it, as in PyTorch
    (``uint8 + -1`` is ``uint8 + 255``); NumPy raises OverflowError instead."""
    dtype = _dtype_of(a, b)
    return tuple(xp.asarray(x).astype(dtype) if x.__class__ is int else x for x in (a, b))


def _check_integer_divisor(xp, b, a=None):
    # Integer division by zero has no result; PyTorch raises instead of NumPy's 0
    # (only when there is something to divide: an empty dividend gives an empty result).
    if getattr(a, "size", 1) == 0:
        return
    if (bool(xp.any(b == 0)) if hasattr(b, "dtype") else b == 0):
        raise RuntimeError("ZeroDivisionError")


def require_tensors(name, input, other):
    """PyTorch's TypeError for ops that take no Python number (no Scalar overload)."""
    for position, x in ((1, input), (2, other)):
        if not hasattr(x, "_data"):
            argument = "input" if position == 1 else "other"
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                            f"not {type_name(x)}")


def type_name(value):
    """The name PyTorch's argument parser gives ``value``'s type: ``float``, ``numpy.float64``."""
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _elementwise(ufunc):
    """The kernel ``xp.<ufunc>(a, b)``, NumPy's errors re-raised as PyTorch's (comparison.py
    uses it too; maximum and friends wrap it in ``quiet``)."""
    def kernel(xp, a, b):
        try:
            return getattr(xp, ufunc)(a, b)
        except ValueError as error:
            _reraise(error, a, b)
    return kernel


# --- add, sub -------------------------------------------------------------------


def _scaled(xp, b, alpha):
    return b * alpha if not hasattr(b, "dtype") else xp.multiply(b, alpha)


def _checked_alpha(a, b, alpha):
    """``alpha`` as the result dtype takes it, after PyTorch's checks: no bool alpha but
    for a bool result, no float alpha for an integer or bool one, an int alpha in the
    integer dtype's range (PyTorch converts it with its overflow check); a bool result
    takes an int alpha as a bool (``a + 3 * b`` is ``a or b``)."""
    dtype = _dtype_of(a, b)
    kind = dtype.kind
    if isinstance(alpha, bool) and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if kind == "b":
        return bool(alpha)
    return checked_int(alpha, dtype) if kind in "iu" else alpha


def _additive_kernel(ufunc_name):
    """The generic kernel of add or sub: ``a <op> alpha * b``, NumPy's broadcast errors
    re-raised as PyTorch's, out-of-range Python ints wrapped like PyTorch. (Without
    alpha, dispatch calls the ufunc itself and runs this only when the ufunc raises.)"""
    def kernel(xp, a, b, alpha=1):
        ufunc = getattr(xp, ufunc_name)
        try:
            if alpha.__class__ is not int or alpha != 1:  # 1.0 and True are checked too
                alpha = _checked_alpha(a, b, alpha)
            if alpha == 1:
                return ufunc(a, b)
            return ufunc(a, _scaled(xp, b, alpha))
        except ValueError as error:
            _reraise(error, a, b)
        except OverflowError:
            return kernel(xp, *_wrap_integers(xp, a, b), alpha)
    kernel.__name__ = f"_{ufunc_name}_kernel"
    return kernel


_add_kernel = _additive_kernel("add")


def _add_backward(ctx, grad):
    alpha = ctx.attrs.get("alpha", 1)
    return grad, (grad if alpha == 1 else grad * alpha)


ADD = Op("aten::add", _add_kernel, _add_backward, elementwise=True, promote=DEFAULT, ufunc="add", jvp=AUTO_ELEMENT_WISE)


def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcast and type-promoted.

    >>> import ember
    >>> ember.add(ember.tensor([1, 2]), ember.tensor([0.5, 0.5]))
    tensor([1.5000, 2.5000])
    """
    if alpha == 1 and alpha.__class__ is int:
        return ADD(input, other)
    return ADD(input, other, alpha=python_number(alpha))


_sub_kernel = _additive_kernel("subtract")


_BOOL = np.dtype(bool)


def _raise_bool_sub(input, other):
    # PyTorch refuses any bool operand, tensor or Python bool, with its own advice.
    if isinstance(input, Tensor) and isinstance(other, Tensor) and input._data.dtype is other._data.dtype:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                       "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _sub_backward(ctx, grad):
    alpha = ctx.attrs.get("alpha", 1)
    return grad, (-grad if alpha == 1 else grad * -alpha)


SUB = Op("aten::sub", _sub_kernel, _sub_backward, elementwise=True, promote=DEFAULT, ufunc="subtract",
         jvp=AUTO_ELEMENT_WISE)


def sub(input, other, *, alpha=1):
    """``input - alpha * other``; not defined for bool operands.

    >>> import ember
    >>> ember.sub(ember.tensor([3.0, 4.0]), 1, alpha=2)
    tensor([1., 2.])
    """
    if (input.__class__ is bool or other.__class__ is bool
            or isinstance(input, Tensor) and input._data.dtype is _BOOL
            or isinstance(other, Tensor) and other._data.dtype is _BOOL):
        _raise_bool_sub(input, other)
    if alpha == 1 and alpha.__class__ is int:
        return SUB(input, other)
    return SUB(input, other, alpha=python_number(alpha))


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``sub`` with the operands swapped)."""
    return sub(other, input, alpha=alpha)


# --- mul, div -------------------------------------------------------------------


def _mul_kernel(xp, a, b):
    try:
        return xp.multiply(a, b)
    except ValueError as error:
        _reraise(error, a, b)
    except OverflowError:
        return _mul_kernel(xp, *_wrap_integers(xp, a, b))


def _mul_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    return (grad * b if need_a else None), (grad * a if need_b else None)


MUL = Op("aten::mul", _mul_kernel, _mul_backward, promote=DEFAULT, save="inputs",
         ufunc="multiply", opmath=True, elementwise=True, jvp=AUTO_ELEMENT_WISE)


def mul(input, other):
    """Elementwise product ``input * other``.

    >>> import ember
    >>> ember.mul(ember.tensor([1.0, 2.0]), 3)
    tensor([3., 6.])
    """
    return MUL(input, other)


multiply = mul


@quiet
def _div_kernel(xp, a, b):
    try:
        return xp.true_divide(a, b)
    except ValueError as error:
        _reraise(error, a, b)


def _div_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    grad_a = grad / b if need_a else None
    grad_b = -grad * a / (b * b) if need_b else None
    return grad_a, grad_b


DIV = Op("aten::div", _div_kernel, _div_backward, elementwise=True, promote=INT_TO_FLOAT, save="inputs", opmath=True,
         jvp=AUTO_ELEMENT_WISE)


@quiet
def _rounded_div_kernel(xp, a, b, rounding_mode):
    if rounding_mode == "floor":
        return _floor_divide_kernel(xp, a, b)
    if rounding_mode != "trunc":
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    dtype = _dtype_of(a, b)
    if dtype.kind == "b":
        raise not_implemented_for("div_trunc_cpu", dtype)
    try:
        if is_floating_array(dtype):
            return xp.trunc(xp.true_divide(a, b))
        a, b = _wrap_integers(xp, a, b)
        _check_integer_divisor(xp, b, a)
        # Integer floor division, then one step toward zero where the signs differ.
        quotient = xp.floor_divide(a, b)
        inexact = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return xp.where(inexact, quotient + 1, quotient).astype(dtype, copy=False)
    except ValueError as error:
        _reraise(error, a, b)


def _zero_grads(ctx, grad):
    # Rounded quotients are piecewise constant: PyTorch defines their gradient as 0.
    from ember.native.factory import zeros_like

    zero = zeros_like(grad)
    return tuple(zero if need else None for need in ctx.needs_input_grad)


_ROUNDED_DIV = Op("aten::div_rounding", _rounded_div_kernel, _zero_grads, elementwise=True, promote=DEFAULT,
                  backward_name="DivBackward2", opmath=True, jvp=AUTO_ELEMENT_WISE)


def div(input, other, *, rounding_mode=None):
    """``input / other``. Integers divide to the default float dtype unless
    ``rounding_mode`` is ``"trunc"`` (toward zero) or ``"floor"`` (toward -inf).

    >>> import ember
    >>> ember.div(ember.tensor([-7, 7]), 2)
    tensor([-3.5000,  3.5000])
    >>> ember.div(ember.tensor([-7, 7]), 2, rounding_mode="trunc")
    tensor([-3,  3])
    """
    if rounding_mode is None:
        return DIV(input, other)
    return _ROUNDED_DIV(input, other, rounding_mode=rounding_mode)


divide = div
true_divide = div


@quiet
def _floor_divide_kernel(xp, a, b):
    dtype = _dtype_of(a, b)
    if dtype.kind == "b":
        raise not_implemented_for("div_floor_cpu", dtype)
    if not is_floating_array(dtype):
        a, b = _wrap_integers(xp, a, b)
        _check_integer_divisor(xp, b, a)
    try:
        return xp.floor_divide(a, b)
    except ValueError as error:
        _reraise(error, a, b)


def _floor_divide_backward(ctx, grad):
    # PyTorch records floor_divide in the graph but has no formula for it.
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


FLOOR_DIVIDE = Op("aten::floor_divide", _floor_divide_kernel, _floor_divide_backward, elementwise=True, promote=DEFAULT,
                  backward_name="NotImplemented", opmath=True)


def floor_divide(input, other):
    """``input // other``, rounding toward negative infinity (Python's rule).

    >>> import ember
    >>> ember.floor_divide(ember.tensor([-7, 7]), 2)
    tensor([-4,  3])
    """
    return FLOOR_DIVIDE(input, other)


def _modulo_kernel(name, ufunc):
    @quiet
    def kernel(xp, a, b):
        dtype = _dtype_of(a, b)
        if dtype.kind == "b":
            raise not_implemented_for(f"{name}_cpu", dtype)
        if not is_floating_array(dtype):
            a, b = _wrap_integers(xp, a, b)
            _check_integer_divisor(xp, b, a)
        try:
            return ufunc(xp)(a, b)
        except ValueError as error:
            _reraise(error, a, b)
    return kernel


def _remainder_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    if need_b and not hasattr(a, "_data"):
        # PyTorch has no formula for `number % tensor` (remainder.Scalar_Tensor).
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return (grad if need_a else None), (-grad * div(a, b, rounding_mode="floor") if need_b else None)


REMAINDER = Op("aten::remainder", _modulo_kernel("remainder", lambda xp: xp.remainder), _remainder_backward,
               elementwise=True, promote=DEFAULT, save="inputs", jvp=AUTO_ELEMENT_WISE)


def remainder(input, other):
    """Python's ``%``: the result has the sign of ``other``.

    >>> import ember
    >>> ember.remainder(ember.tensor([-3, 3]), 2)
    tensor([1, 1])
    """
    return REMAINDER(input, other)


def _fmod_backward(ctx, grad):
    a, b = ctx.saved_inputs
    need_a, need_b = ctx.needs_input_grad
    return (grad if need_a else None), (-grad * div(a, b, rounding_mode="trunc") if need_b else None)


FMOD = Op("aten::fmod", _modulo_kernel("fmod", lambda xp: xp.fmod), _fmod_backward, elementwise=True, promote=DEFAULT,
          save="inputs", jvp=AUTO_ELEMENT_WISE)


def fmod(input, other):
    """C's ``fmod``: the result has the sign of ``input``.

    >>> import ember
    >>> ember.fmod(ember.tensor([-3, 3]), 2)
    tensor([-1,  1])
    """
    return FMOD(input, other)
