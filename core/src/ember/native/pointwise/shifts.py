"""Bitwise shifts: ``bitwise_left_shift`` (``<<``) and ``bitwise_right_shift`` (``>>``).

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp and
aten/src/ATen/native/cpu/BinaryOpsKernel.cpp (``lshift_kernel``, ``rshift_kernel``)
(v2.13).

Integer and bool tensors only (promoted like ``+``). PyTorch defines what C leaves
undefined: a shift by a negative amount or by the type's width or more gives 0 to the
left, and the sign fill to the right (0, or -1 for a negative signed value); a left
shift wraps around in the type.
"""

from ember.dispatcher import DEFAULT, Op
from ember.dtypes import is_floating_array


def _bits(a):
    return a.dtype.itemsize * 8


def _lshift_kernel(xp, a, b):
    _check_integral(a, "lshift_cpu")
    width = _bits(a)
    out_of_range = (b < 0) | (b >= width)
    amount = xp.where(out_of_range, 0, b).astype(a.dtype)
    shifted = xp.left_shift(a, amount)
    return xp.where(out_of_range, xp.zeros_like(shifted), shifted)


def _rshift_kernel(xp, a, b):
    _check_integral(a, "rshift_cpu")
    width = _bits(a)
    clamped = xp.where((b < 0) | (b >= width), width - 1, b).astype(a.dtype)
    if a.dtype.kind == "u" or a.dtype.kind == "b":
        return xp.where((b < 0) | (b >= width), xp.zeros_like(a), xp.right_shift(a, clamped))
    return xp.right_shift(a, clamped)  # arithmetic: a shift by width - 1 leaves the sign fill


def _check_integral(a, kernel_name):
    if is_floating_array(a.dtype):
        from ember import dtypes
        from ember.native.support._inplace import _type_name

        name = _type_name(dtypes.from_numpy_dtype(a.dtype))
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{name}'")


LSHIFT = Op("aten::bitwise_left_shift", _lshift_kernel, None, elementwise=True, promote=DEFAULT)
RSHIFT = Op("aten::bitwise_right_shift", _rshift_kernel, None, elementwise=True, promote=DEFAULT)


def _as_tensor_pair(input, other):
    if hasattr(input, "_data"):
        return input, other
    from ember.native.factory import tensor

    return tensor(input, device=other.device), other  # a number on the left: PyTorch wraps it too


def bitwise_left_shift(input, other):
    """``input << other`` elementwise, for integer tensors.

    >>> import ember
    >>> ember.tensor([1, -8, 5], dtype=ember.int32) << 2
    tensor([  4, -32,  20], dtype=ember.int32)
    """
    input, other = _as_tensor_pair(input, other)
    return LSHIFT(input, other)


def bitwise_right_shift(input, other):
    """``input >> other`` elementwise (arithmetic for signed types), for integer tensors.

    >>> import ember
    >>> ember.tensor([1, -8, 5], dtype=ember.int32) >> 1
    tensor([ 0, -4,  2], dtype=ember.int32)
    """
    input, other = _as_tensor_pair(input, other)
    return RSHIFT(input, other)


def reflected_left_shift(self, other):
    return bitwise_left_shift(other, self)


def reflected_right_shift(self, other):
    return bitwise_right_shift(other, self)
