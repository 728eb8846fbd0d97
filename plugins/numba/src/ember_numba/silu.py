"""ember-activation's SiLU forward (``activation::silu``) on float32 as one compiled
loop with its own vectorizable ``exp``: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/cpu/Activation.cpp (``silu_kernel``: ``x /
(1 + exp(-x))`` on ``Vectorized<float>``, whose ``exp`` is a SIMD polynomial) (v2.13).

# NOTE [ A SIMD exp for SiLU ]
# NumPy's float32 ``exp`` costs about 2 ns a value on this machine's AVX2 (no SIMD
# loop for it there), and SiLU is ``exp`` plus three more passes: twice torch's
# time, about 3.6 ms of a yolo_nano inference. numba's ``math.exp`` is a scalar libm
# call per value. The loop below writes ``exp`` as arithmetic LLVM can turn into
# eight-wide SIMD code, in one pass that reads ``x`` once and writes the result once:
# - range reduction (Cody and Waite): ``z = k ln2 + r`` with ``k`` the nearest
#   integer to ``z / ln2`` (found by adding and subtracting 1.5 * 2**23, which rounds,
#   with no ``floor`` call) and ``ln2`` split in two so that ``k * C1`` is exact;
# - ``exp(r)``, |r| <= ln2 / 2, by Cephes' degree-7 polynomial (``expf``);
# - the scale ``2**k`` built from its bits, ``(k + 126) << 23`` read as a float32,
#   times ``2 * p``: ``2**(k-1)`` is a normal float32 for every ``k`` the clamp lets
#   through, and ``k = 128`` (``z`` above log(FLT_MAX)) overflows to inf, as ``exp``
#   does.
# ``z = -x`` is clamped to [-87, 89] first: below -87, ``1 + exp(z)`` is 1 either way;
# above 88.73, ``exp`` is inf and ``x / inf`` is -0, torch's result. A NaN ``x`` is
# clamped to -87 (``max(LO, z)`` keeps LO, so no NaN reaches the int conversion) and
# comes back as NaN from the division. -inf gives NaN (-inf / inf), +inf gives inf,
# both as torch.
# The loop is compiled without fast-math (ember_numba/exact.py): ``reassoc`` would
# fold ``(t + M) - M`` to ``t`` and ``z - k*C1 - k*C2`` to ``z - k*(C1 + C2)``, which
# loses the rounding and the exact split. Measured against float64 on 3M values in
# [-100, 100] and N(0, 10): at most 2.31 ulp, mean 0.267 (torch 2.31 and 0.266,
# NumPy's kernel 3.46 and 0.342); 99.2% of results equal torch's bit for bit.
# float64 (and other dtypes, empty or non-dense arrays) go to ember-activation's
# NumPy kernel, whose float64 ``exp`` is correctly rounded within 1 ulp.
"""

import numpy as np

from ember_activation.sigmoid_family import SILU
from ember_numba.exact import jit_exact

F = np.float32
LO, HI = F(-87.0), F(89.0)  # the clamp on z = -x (NOTE above)
LOG2E = F(1.4426950408889634)
ROUND = F(12582912.0)  # 1.5 * 2**23: t + ROUND - ROUND rounds t to an integer
C1, C2 = F(0.693359375), F(-2.12194440e-4)  # ln2 = C1 + C2, C1 with 9 significant bits
P0, P1, P2 = F(1.9875691500e-4), F(1.3981999507e-3), F(8.3334519073e-3)  # Cephes expf
P3, P4, P5 = F(4.1665795894e-2), F(1.6666665459e-1), F(5.0000001201e-1)
ONE = F(1.0)
HALF_BIAS = np.int32(126)  # the exponent bias minus one: bits of 2**(k-1)


def silu(xp, x):
    """``activation::silu`` on the cpu: the compiled loop for dense float32 arrays, the
    NumPy kernel (``SILU.generic``) for everything else."""
    values = _dense(x)
    if values is None or x.dtype != F or x.size == 0:
        return SILU.generic(xp, x)
    out = np.empty_like(x)  # the input's layout, as NumPy's ufuncs give
    if out.strides != x.strides:  # a size-1 axis strided differently: not worth a case
        return SILU.generic(xp, x)
    silu_loop(values, _dense(out))
    return out


def _dense(array):
    """``array``'s values in memory order as a flat view (C-contiguous, channels_last
    or any other dense layout), or None when it has gaps or overlaps."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    flat = np.ravel(array, order="K")
    return None if flat.flags.owndata else flat


@jit_exact  # NOTE above: no fast-math
def silu_loop(x, out):
    for i in range(x.size):
        v = x[i]
        z = min(HI, max(LO, -v))  # LO first: a NaN becomes LO
        k = (z * LOG2E + ROUND) - ROUND
        r = (z - k * C1) - k * C2
        q = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5
        p = q * (r * r) + r + ONE  # exp(r)
        bits = np.int32((np.int32(k) + HALF_BIAS) << 23)
        out[i] = v / (ONE + (p + p) * bits.view(np.float32))  # bits: 2**(k-1)
