"""Comparison and logic: ``eq ne lt le gt ge``, ``logical_*``, bitwise ops on bool and
integers, ``isnan isinf isfinite``, ``equal allclose isclose``.

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (comparison and logical
kernels), aten/src/ATen/native/TensorCompare.cpp (isclose, allclose) (v2.13).

None of these is differentiable: their outputs are bool (or integers), so the
dispatcher never gives them a ``grad_fn``.
"""

from ember.dispatcher import COMPARE, DEFAULT, NONE, Op


def _compare(name, ufunc):
    return Op(f"aten::{name}", lambda xp, a, b: getattr(xp, ufunc)(a, b), None, promote=COMPARE)


EQ = _compare("eq", "equal")
NE = _compare("ne", "not_equal")
LT = _compare("lt", "less")
LE = _compare("le", "less_equal")
GT = _compare("gt", "greater")
GE = _compare("ge", "greater_equal")


def eq(input, other):
    """``input == other`` elementwise, as a bool tensor."""
    return EQ(input, other)


def ne(input, other):
    return NE(input, other)


def lt(input, other):
    return LT(input, other)


def le(input, other):
    return LE(input, other)


def gt(input, other):
    return GT(input, other)


def ge(input, other):
    return GE(input, other)


not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _logical(name, ufunc):
    return Op(f"aten::{name}", lambda xp, a, b: getattr(xp, ufunc)(a, b), None, promote=NONE)


LOGICAL_AND = _logical("logical_and", "logical_and")
LOGICAL_OR = _logical("logical_or", "logical_or")
LOGICAL_XOR = _logical("logical_xor", "logical_xor")
LOGICAL_NOT = Op("aten::logical_not", lambda xp, a: xp.logical_not(a), None)


def logical_and(input, other):
    """Elementwise AND of the truth values (nonzero is true)."""
    return LOGICAL_AND(input, other)


def logical_or(input, other):
    return LOGICAL_OR(input, other)


def logical_xor(input, other):
    return LOGICAL_XOR(input, other)


def logical_not(input):
    return LOGICAL_NOT(input)


def _bitwise(name, ufunc):
    def kernel(xp, a, b):
        for x in (a, b):
            if getattr(x, "dtype", None) is not None and x.dtype.kind == "f":
                raise RuntimeError(f"\"{name}_cpu\" not implemented for 'Float'")
        return getattr(xp, ufunc)(a, b)
    return Op(f"aten::{name}", kernel, None, promote=DEFAULT)


BITWISE_AND = _bitwise("bitwise_and", "bitwise_and")
BITWISE_OR = _bitwise("bitwise_or", "bitwise_or")
BITWISE_XOR = _bitwise("bitwise_xor", "bitwise_xor")


def _bitwise_not_kernel(xp, a):
    if a.dtype.kind == "f":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
    return xp.logical_not(a) if a.dtype.kind == "b" else xp.invert(a)


BITWISE_NOT = Op("aten::bitwise_not", _bitwise_not_kernel, None)


def bitwise_and(input, other):
    """``&`` on bool or integer tensors."""
    return BITWISE_AND(input, other)


def bitwise_or(input, other):
    return BITWISE_OR(input, other)


def bitwise_xor(input, other):
    return BITWISE_XOR(input, other)


def bitwise_not(input):
    """``~``: logical not for bool, bit inversion for integers."""
    return BITWISE_NOT(input)


ISNAN = Op("aten::isnan", lambda xp, a: xp.isnan(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool), None)
ISINF = Op("aten::isinf", lambda xp, a: xp.isinf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool), None)
ISFINITE = Op("aten::isfinite", lambda xp, a: xp.isfinite(a) if a.dtype.kind == "f" else xp.ones(a.shape, bool), None)
ISPOSINF = Op("aten::isposinf", lambda xp, a: xp.isposinf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool), None)
ISNEGINF = Op("aten::isneginf", lambda xp, a: xp.isneginf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool), None)


def isnan(input):
    return ISNAN(input)


def isinf(input):
    return ISINF(input)


def isfinite(input):
    return ISFINITE(input)


def isposinf(input):
    return ISPOSINF(input)


def isneginf(input):
    return ISNEGINF(input)


def _isclose_kernel(xp, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


ISCLOSE = Op("aten::isclose", _isclose_kernel, None, promote=DEFAULT)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise."""
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    return ISCLOSE(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is close (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool(eq(input, other).all())
