"""Comparison and logic: ``eq ne lt le gt ge``, ``logical_*``, bitwise ops on bool and
integers, ``isnan isinf isfinite isposinf isneginf``, ``isclose allclose equal``.

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (comparison, logical and
bitwise kernels), aten/src/ATen/native/TensorCompare.cpp (isclose, allclose, isnan)
and aten/src/ATen/native/UnaryOps.cpp (isposinf, isneginf) (v2.13).

None of these is differentiable: their outputs are bool (or integers), so the
dispatcher never gives them a ``grad_fn``.

Argument rules follow PyTorch's signatures: comparisons take a Python number as
``other`` only (``1 < x`` works because Python turns it into ``x > 1``); logical ops
and ``isclose`` take tensors only; bitwise ops take a number on either side but no
floating point.
"""

import numpy as np

from ember.dispatcher import COMPARE, DEFAULT, NONE, Op
from ember.dtypes import is_floating_array
from ember.native.pointwise.binary import _elementwise, _reraise, require_tensors
from ember.native.pointwise.unary import not_implemented_for


def _require_tensor_input(name, input, other):
    if not hasattr(input, "_data") or not _comparable(other):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected (Tensor input, "
                        "Tensor other) or (Tensor input, Number other)")


# --- eq, ne, lt, le, gt, ge -----------------------------------------------------


def _compare(name, ufunc):
    return Op(f"aten::{name}", _elementwise(ufunc), None, promote=COMPARE, ufunc=ufunc, elementwise=True)


EQ = _compare("eq", "equal")
NE = _compare("ne", "not_equal")
LT = _compare("lt", "less")
LE = _compare("le", "less_equal")
GT = _compare("gt", "greater")
GE = _compare("ge", "greater_equal")


def eq(input, other):
    """``input == other`` elementwise, as a bool tensor; ``other`` may be a number.

    >>> import ember
    >>> ember.eq(ember.tensor([1, 2, 3]), 2)
    tensor([False,  True, False])
    """
    _require_tensor_input("eq", input, other)
    return EQ(input, other)


def ne(input, other):
    """``input != other`` elementwise."""
    _require_tensor_input("ne", input, other)
    return NE(input, other)


def lt(input, other):
    """``input < other`` elementwise (compared in the promoted dtype: ``int < float`` as float)."""
    _require_tensor_input("lt", input, other)
    return LT(input, other)


def le(input, other):
    """``input <= other`` elementwise."""
    _require_tensor_input("le", input, other)
    return LE(input, other)


def gt(input, other):
    """``input > other`` elementwise."""
    _require_tensor_input("gt", input, other)
    return GT(input, other)


def ge(input, other):
    """``input >= other`` elementwise."""
    _require_tensor_input("ge", input, other)
    return GE(input, other)


not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _comparable(other):
    # A NumPy scalar is a number too (NOTE [ NumPy scalars are Python numbers ] in dtypes.py).
    return hasattr(other, "_data") or other.__class__ in (int, float, bool) or isinstance(other, np.generic)


def tensor_eq(self, other):
    """``Tensor.__eq__``: ``eq``, and ``NotImplemented`` for an object that is neither a
    tensor nor a number, so that Python answers ``False`` (``x == None``). A NumPy array
    is read as a tensor, as PyTorch's ``==`` does (NOTE [ NumPy arrays as operator
    operands ] in tensor_methods.py)."""
    if other.__class__ is np.ndarray:
        from ember.native.factory import tensor

        return eq(self, tensor(other, device=self.device))
    return eq(self, other) if _comparable(other) else NotImplemented


def tensor_ne(self, other):
    """``Tensor.__ne__``: ``ne``, and ``NotImplemented`` (so ``True``) for other objects."""
    return ne(self, other) if _comparable(other) else NotImplemented


# --- logical_and, logical_or, logical_xor, logical_not ------------------------------


def _logical(name, ufunc):
    return Op(f"aten::{name}", _elementwise(ufunc), None, promote=NONE, elementwise=True)


LOGICAL_AND = _logical("logical_and", "logical_and")
LOGICAL_OR = _logical("logical_or", "logical_or")
LOGICAL_XOR = _logical("logical_xor", "logical_xor")
LOGICAL_NOT = Op("aten::logical_not", lambda xp, a: xp.logical_not(a), None, elementwise=True)


def logical_and(input, other):
    """Elementwise AND of the truth values (nonzero is true), as a bool tensor.

    >>> import ember
    >>> ember.logical_and(ember.tensor([0, 1, 2]), ember.tensor([1.0, 0.0, 3.0]))
    tensor([False, False,  True])
    """
    require_tensors("logical_and", input, other)
    return LOGICAL_AND(input, other)


def logical_or(input, other):
    """Elementwise OR of the truth values."""
    require_tensors("logical_or", input, other)
    return LOGICAL_OR(input, other)


def logical_xor(input, other):
    """Elementwise XOR of the truth values."""
    require_tensors("logical_xor", input, other)
    return LOGICAL_XOR(input, other)


def logical_not(input):
    """Elementwise NOT of the truth values (``x == 0``)."""
    return LOGICAL_NOT(input)


# --- bitwise_and, bitwise_or, bitwise_xor, bitwise_not ------------------------------


def _bitwise(name, ufunc):
    def kernel(xp, a, b):
        dtype = a.dtype if hasattr(a, "dtype") else b.dtype
        if is_floating_array(dtype):
            raise not_implemented_for(f"{name}_cpu", dtype)
        try:
            return getattr(xp, ufunc)(a, b)
        except ValueError as error:
            _reraise(error, a, b)
    return Op(f"aten::{name}", kernel, None, promote=DEFAULT, elementwise=True)


BITWISE_AND = _bitwise("bitwise_and", "bitwise_and")
BITWISE_OR = _bitwise("bitwise_or", "bitwise_or")
BITWISE_XOR = _bitwise("bitwise_xor", "bitwise_xor")


def _bitwise_not_kernel(xp, a):
    if is_floating_array(a.dtype):
        raise not_implemented_for("bitwise_not_cpu", a.dtype)
    return xp.logical_not(a) if a.dtype.kind == "b" else xp.invert(a)


BITWISE_NOT = Op("aten::bitwise_not", _bitwise_not_kernel, None, elementwise=True)


def bitwise_and(input, other):
    """``&`` on bool or integer tensors (either side may be a number).

    >>> import ember
    >>> ember.bitwise_and(ember.tensor([12, 10]), 6)
    tensor([4, 2])
    """
    return BITWISE_AND(input, other)


def bitwise_or(input, other):
    """``|`` on bool or integer tensors."""
    return BITWISE_OR(input, other)


def bitwise_xor(input, other):
    """``^`` on bool or integer tensors."""
    return BITWISE_XOR(input, other)


def bitwise_not(input):
    """``~``: logical not for bool, bit inversion (``-x - 1``) for integers."""
    return BITWISE_NOT(input)


def tensor_invert(self):
    """``Tensor.__invert__``: ``bitwise_not``; the operator raises TypeError on floats."""
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return BITWISE_NOT(self)


# --- isnan, isinf, isfinite, isposinf, isneginf -------------------------------------


def _classifier(name, ufunc, integer_answer):
    # Integers and bools are never nan or infinite; `integer_answer` is the constant.
    def kernel(xp, a):
        if is_floating_array(a.dtype):
            return getattr(xp, ufunc)(a)
        return xp.full(a.shape, integer_answer, dtype=bool)
    return Op(f"aten::{name}", kernel, None, elementwise=True)


ISNAN = _classifier("isnan", "isnan", False)
ISINF = _classifier("isinf", "isinf", False)
ISFINITE = _classifier("isfinite", "isfinite", True)
ISPOSINF = _classifier("isposinf", "isposinf", False)
ISNEGINF = _classifier("isneginf", "isneginf", False)


def isnan(input):
    """True where ``input`` is NaN.

    >>> import ember
    >>> ember.isnan(ember.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    return ISNAN(input)


def isinf(input):
    """True where ``input`` is +inf or -inf."""
    return ISINF(input)


def isfinite(input):
    """True where ``input`` is neither NaN nor infinite."""
    return ISFINITE(input)


def isposinf(input):
    """True where ``input`` is +inf."""
    return ISPOSINF(input)


def isneginf(input):
    """True where ``input`` is -inf."""
    return ISNEGINF(input)


# --- isclose, allclose, equal -------------------------------------------------------


def _isclose_kernel(xp, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype.kind == "b":
        return xp.equal(a, b)
    try:
        return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError as error:
        _reraise(error, a, b)


ISCLOSE = Op("aten::isclose", _isclose_kernel, None, elementwise=True, promote=NONE)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise; both tensors of one dtype.

    >>> import ember
    >>> ember.isclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0 + 1e-7, 2.1]))
    tensor([ True, False])
    """
    require_tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_type_name(input)} did not match {_type_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return ISCLOSE(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _type_name(tensor):
    from ember.native.support._inplace import _type_name as name_of

    return name_of(tensor._data.dtype)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True (a Python bool) when every element is close (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True (a Python bool) when both tensors have the same shape and elements; the
    dtypes may differ, NaN is never equal."""
    require_tensors("equal", input, other)
    return tuple(input.shape) == tuple(other.shape) and bool(eq(input, other).all())
