"""``exp`` and a row max for compiled loops that LLVM can turn into SIMD code: for
float32 a range reduction, a polynomial and a power of two built from its bits; for
float64 the C library's exp. The max compares the floats' bits as integers.

PyTorch counterpart: aten/src/ATen/cpu/vec/vec256/vec256_float.h
(``Vectorized<float>::exp``) (v2.13).

This module imports numba (its ``intrinsic`` makes the bit cast), so the kernels that use
it import it at their first call, as ember_numba/jit.py imports numba.

# NOTE [ Why not math.exp ]
# numba compiles ``math.exp`` to a call of the C library's scalar ``exp``; without
# Intel's SVML (not installed here, nor on a fresh CI machine) LLVM cannot vectorize a
# loop that calls it, and a row of 1000 exponentials took about 7 ns each, where
# NumPy's and torch's SIMD exponentials take 1-2 ns. So the loops compute it the way
# torch's ``Vectorized<float>::exp`` does: ``x = n * ln 2 + r`` with ``|r| <= ln 2 / 2``
# (n the nearest integer to ``x / ln 2``, ``ln 2`` split in two so that ``n * ln 2`` is
# exact), ``exp(r)`` by a polynomial, and ``2 ** n`` written straight into the float's
# exponent bits. Everything is arithmetic and selects, which vectorize. Below the
# smallest normal result it returns 0 (torch's float kernel flushes there too), above
# the largest finite one inf, and NaN stays NaN.
"""

import math

import llvmlite.ir
import numba
import numpy as np
from numba import types
from numba.core.extending import intrinsic, overload


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose bits are the int32 ``bits`` (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvmlite.ir.FloatType())
    return types.float32(types.int32), codegen


@intrinsic
def _float64_from_bits(typingctx, bits):
    """The float64 whose bits are the int64 ``bits``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvmlite.ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _bits_of_float32(typingctx, x):
    """The int32 whose bits are the float32 ``x``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvmlite.ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def _bits_of_float64(typingctx, x):
    """The int64 whose bits are the float64 ``x``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvmlite.ir.IntType(64))
    return types.int64(types.float64), codegen


# float32: ln 2 = LN2_HI + LN2_LO with LN2_HI's last 12 bits zero (Cephes' split), and
# the minimax polynomial of Cephes' expf (relative error under 2 ulp on [-ln2/2, ln2/2])
F32_LOG2E = 1.44269504088896341
F32_LN2_HI = 0.693359375
F32_LN2_LO = -2.12194440e-4
F32_LOWEST = -103.972077083992  # log of the smallest subnormal float32, 2 ** -149.5
F32_HIGHEST = 88.7228391116729  # log of the largest finite float32
F32_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
            5.0000001201e-1)


@numba.njit(fastmath={"contract"}, cache=True)  # its own flags, not the caller's: NOTE above
def exp32(x):
    """``exp(x)`` of a float32, to about 1 ulp."""
    clamped = min(max(x, numba.float32(F32_LOWEST)), numba.float32(F32_HIGHEST))
    n = np.floor(clamped * numba.float32(F32_LOG2E) + numba.float32(0.5))
    r = clamped - n * numba.float32(F32_LN2_HI) - n * numba.float32(F32_LN2_LO)
    p = numba.float32(F32_POLY[0])
    for c in F32_POLY[1:]:
        p = p * r + numba.float32(c)
    y = p * r * r + r + numba.float32(1.0)
    # 2 ** n as two normal floats, 2 ** half and 2 ** (n - half), each written as its
    # exponent field (e + 127): n runs from -150 (a subnormal result) to 128 (beyond the
    # largest float, 2 ** 127.99), where one factor would not fit
    k = np.int32(n)
    half = k >> np.int32(1)
    y = y * _float32_from_bits((half + np.int32(127)) << np.int32(23))
    y = y * _float32_from_bits((k - half + np.int32(127)) << np.int32(23))
    if x < numba.float32(F32_LOWEST):
        y = numba.float32(0.0)
    if x > numba.float32(F32_HIGHEST):
        y = numba.float32(np.inf)
    return x if x != x else y


def vector_exp(x):
    """``exp(x)`` in a compiled loop: :func:`exp32` for float32, the C library's for
    float64 (numba's ``math.exp``; NumPy's float64 ``exp`` is the same scalar code on
    AVX2 machines, so there is nothing to gain there)."""
    return math.exp(x)


@overload(vector_exp, inline="never")
def _vector_exp(x):
    if x == types.float32:
        return lambda x: exp32(x)
    return lambda x: math.exp(x)


# NOTE [ A row max that vectorizes ]
# ``m = x if x > m else m`` is a chain of compare-and-selects that LLVM vectorizes only
# when it may assume no NaN (a flag jit.py leaves out): 20 us for the 32000 values of
# (32, 1000) float32 logits, half the time of their exponentials. Integers have no NaN:
# a float's bits, with the magnitude bits flipped when the sign bit is set, order as
# the floats do (-inf < ... < -0 < +0 < ... < inf), and an integer max vectorizes. A
# NaN with its sign bit clear orders above inf and wins, as in torch's max; one with it
# set orders below -inf, and then ``x - max`` is NaN at the NaN anyway, so the row's
# sum and every output are NaN, as torch's are.


def row_max(row):
    """The max of a 1-d float32 or float64 array (NOTE above)."""
    return max(row)


@overload(row_max)
def _row_max(row):
    if row.dtype == types.float32:
        bits, from_bits, magnitude = _bits_of_float32, _float32_from_bits, np.int32(0x7FFFFFFF)
        shift = np.int32(31)
    else:
        bits, from_bits, magnitude = _bits_of_float64, _float64_from_bits, np.int64(0x7FFFFFFFFFFFFFFF)
        shift = np.int64(63)

    def impl(row):
        key = bits(row[0])
        top = key ^ ((key >> shift) & magnitude)
        for j in range(row.size):
            key = bits(row[j])
            key = key ^ ((key >> shift) & magnitude)
            top = key if key > top else top
        return from_bits(top ^ ((top >> shift) & magnitude))
    return impl
