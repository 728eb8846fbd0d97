"""The loops of ember_numba/direct_conv.py (NOTE [ Register blocks ] there), in a module
of their own: it imports numba, which ember_numba/direct_conv.py imports on first use.

PyTorch counterpart: aten/src/ATen/native/mkldnn/Conv.cpp (v2.13), whose CPU
convolution runs oneDNN's direct kernels (``jit_avx512_common_conv_kernel``).
"""

import numba
import numpy as np
from numba import types
from numba import uint64 as u
from numba.core import cgutils
from numba.extending import intrinsic

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact

BLOCK = 8  # output channels per block: the eight accumulator rows a0..a7 below
SEGMENT = 16  # outputs of a row per block: one AVX-512 register of float32


@intrinsic
def stack_row(typingctx, like):
    """A pointer to SEGMENT floats of ``like``'s dtype on the stack (NOTE [ Register
    blocks ]): memory LLVM may keep in registers, where an array numba allocates lives
    on the heap, out of the optimizer's reach."""
    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_value_type(like.dtype), size=SEGMENT)
    return types.CPointer(like.dtype)(like), codegen


@numba.njit(cache=True)  # called from the loop below, compiled with it
def _pad_image(x, n, C, H, W, ph, pw, padded):
    """Copy image ``n`` of the flat ``x`` into the interior of the zero-bordered
    ``padded`` (C planes of (H + 2 ph) x (W + 2 pw)); its border stays zero."""
    Hp, Wp = H + 2 * ph, W + 2 * pw
    for c in range(C):
        for h in range(H):
            s = ((n * C + c) * H + h) * W
            d = (c * Hp + h + ph) * Wp + pw
            for t in range(W):
                padded[u(d + t)] = x[u(s + t)]


@ahead_of_time("void(float32[::1], float32[::1], float32[::1], float32[::1], "
               "i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def conv3x3_loop(x, wt, bias, out, N, C, H, W, O, ph, pw):
    """``out`` (flat (N, O, OH, OW)) = the 3x3 stride-1 convolution of the flat images
    ``x`` (N, C, H, W) padded by (ph, pw), with the weight ``wt`` stored (C, 3, 3, O)
    (one tap's weights for all output channels side by side), plus ``bias``; each
    output's terms in the order (c, i, j). Needs O >= BLOCK and OW >= SEGMENT: the last
    block and segment start earlier and overlap the previous ones (those outputs are
    computed again, to the same bits)."""
    Hp, Wp = H + 2 * ph, W + 2 * pw
    OH, OW = Hp - 2, Wp - 2
    L = OH * OW
    padded = np.zeros(C * Hp * Wp, dtype=x.dtype)
    a0, a1, a2, a3 = stack_row(x), stack_row(x), stack_row(x), stack_row(x)
    a4, a5, a6, a7 = stack_row(x), stack_row(x), stack_row(x), stack_row(x)
    for n in range(N):
        _pad_image(x, n, C, H, W, ph, pw, padded)
        for block in range(0, O, BLOCK):
            o = min(block, O - BLOCK)
            for oh in range(OH):
                for segment in range(0, OW, SEGMENT):
                    ow = min(segment, OW - SEGMENT)
                    for t in range(SEGMENT):
                        a0[t] = a1[t] = a2[t] = a3[t] = 0
                        a4[t] = a5[t] = a6[t] = a7[t] = 0
                    for c in range(C):
                        for i in range(3):
                            row = (c * Hp + oh + i) * Wp + ow
                            for j in range(3):
                                k = ((c * 3 + i) * 3 + j) * O + o
                                w0, w1 = wt[u(k)], wt[u(k + 1)]
                                w2, w3 = wt[u(k + 2)], wt[u(k + 3)]
                                w4, w5 = wt[u(k + 4)], wt[u(k + 5)]
                                w6, w7 = wt[u(k + 6)], wt[u(k + 7)]
                                for t in range(SEGMENT):
                                    v = padded[u(row + j + t)]
                                    a0[t] += w0 * v
                                    a1[t] += w1 * v
                                    a2[t] += w2 * v
                                    a3[t] += w3 * v
                                    a4[t] += w4 * v
                                    a5[t] += w5 * v
                                    a6[t] += w6 * v
                                    a7[t] += w7 * v
                    e = ((n * O + o) * OH + oh) * OW + ow
                    _store_block(out, e, L, bias, o, a0, a1, a2, a3, a4, a5, a6, a7)


@numba.njit(cache=True)  # called from the loop above, compiled with it
def _store_block(out, e, L, bias, o, a0, a1, a2, a3, a4, a5, a6, a7):
    """Write the eight rows' sums plus their channels' bias to the output rows at
    ``e``, ``e + L``, ..., ``e + 7 L``."""
    for t in range(SEGMENT):
        out[u(e + t)] = a0[t] + bias[o]
        out[u(e + L + t)] = a1[t] + bias[o + 1]
        out[u(e + 2 * L + t)] = a2[t] + bias[o + 2]
        out[u(e + 3 * L + t)] = a3[t] + bias[o + 3]
        out[u(e + 4 * L + t)] = a4[t] + bias[o + 4]
        out[u(e + 5 * L + t)] = a5[t] + bias[o + 5]
        out[u(e + 6 * L + t)] = a6[t] + bias[o + 6]
        out[u(e + 7 * L + t)] = a7[t] + bias[o + 7]


@numba.njit(cache=True)  # called from the loop below, compiled with it
def _lane_sum(a):
    """The SEGMENT floats at ``a`` summed by halves (8 + 8, 4 + 4, 2 + 2, 1 + 1), as
    the NumPy kernel's ``lane_sums`` does; ``a`` is overwritten."""
    half = SEGMENT // 2
    while half > 0:
        for t in range(half):
            a[t] = a[t] + a[t + half]
        half //= 2
    return a[0]


@ahead_of_time("void(float32[::1], float32[::1], float32[::1], "
               "i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def weight3x3_loop(x, grad, dw, N, C, H, W, O, ph, pw):
    """``dw`` (flat (O, C, 3, 3)) = the weight's gradient of the 3x3 stride-1
    convolution of the flat images ``x`` (N, C, H, W) padded by (ph, pw) whose output
    gradient is the flat ``grad`` (N, O, OH, OW), O >= 2, OW a multiple of SEGMENT:
    per image, output channel, input channel and tap, SEGMENT lanes of running sums
    over the output rows and segments, summed by halves, then added onto ``dw``. Two
    output channels at a time (a and b) share each shifted input row they read; with
    O odd the last pair starts one channel early and writes its second only."""
    Hp, Wp = H + 2 * ph, W + 2 * pw
    OH, OW = Hp - 2, Wp - 2
    L = OH * OW
    padded = np.zeros(C * Hp * Wp, dtype=x.dtype)
    a0, a1, a2 = stack_row(x), stack_row(x), stack_row(x)
    a3, a4, a5 = stack_row(x), stack_row(x), stack_row(x)
    a6, a7, a8 = stack_row(x), stack_row(x), stack_row(x)
    b0, b1, b2 = stack_row(x), stack_row(x), stack_row(x)
    b3, b4, b5 = stack_row(x), stack_row(x), stack_row(x)
    b6, b7, b8 = stack_row(x), stack_row(x), stack_row(x)
    for k in range(O * C * 9):
        dw[u(k)] = 0
    for n in range(N):
        _pad_image(x, n, C, H, W, ph, pw, padded)
        for pair in range(0, O, 2):
            o = min(pair, O - 2)
            for c in range(C):
                for t in range(SEGMENT):
                    a0[t] = a1[t] = a2[t] = a3[t] = a4[t] = a5[t] = 0
                    a6[t] = a7[t] = a8[t] = b0[t] = b1[t] = b2[t] = 0
                    b3[t] = b4[t] = b5[t] = b6[t] = b7[t] = b8[t] = 0
                for oh in range(OH):
                    for ow in range(0, OW, SEGMENT):
                        e = ((n * O + o) * OH + oh) * OW + ow
                        r = (c * Hp + oh) * Wp + ow
                        for t in range(SEGMENT):
                            g, h = grad[u(e + t)], grad[u(e + L + t)]
                            v = padded[u(r + t)]
                            a0[t] += g * v
                            b0[t] += h * v
                            v = padded[u(r + 1 + t)]
                            a1[t] += g * v
                            b1[t] += h * v
                            v = padded[u(r + 2 + t)]
                            a2[t] += g * v
                            b2[t] += h * v
                            v = padded[u(r + Wp + t)]
                            a3[t] += g * v
                            b3[t] += h * v
                            v = padded[u(r + Wp + 1 + t)]
                            a4[t] += g * v
                            b4[t] += h * v
                            v = padded[u(r + Wp + 2 + t)]
                            a5[t] += g * v
                            b5[t] += h * v
                            v = padded[u(r + 2 * Wp + t)]
                            a6[t] += g * v
                            b6[t] += h * v
                            v = padded[u(r + 2 * Wp + 1 + t)]
                            a7[t] += g * v
                            b7[t] += h * v
                            v = padded[u(r + 2 * Wp + 2 + t)]
                            a8[t] += g * v
                            b8[t] += h * v
                k = (o * C + c) * 9
                if o == pair:
                    _add_taps(dw, k, a0, a1, a2, a3, a4, a5, a6, a7, a8)
                _add_taps(dw, k + C * 9, b0, b1, b2, b3, b4, b5, b6, b7, b8)


@numba.njit(cache=True)  # called from the loop above, compiled with it
def _add_taps(dw, k, a0, a1, a2, a3, a4, a5, a6, a7, a8):
    """Add the lane sums of the nine taps' rows onto ``dw[k:k + 9]``."""
    dw[u(k)] += _lane_sum(a0)
    dw[u(k + 1)] += _lane_sum(a1)
    dw[u(k + 2)] += _lane_sum(a2)
    dw[u(k + 3)] += _lane_sum(a3)
    dw[u(k + 4)] += _lane_sum(a4)
    dw[u(k + 5)] += _lane_sum(a5)
    dw[u(k + 6)] += _lane_sum(a6)
    dw[u(k + 7)] += _lane_sum(a7)
    dw[u(k + 8)] += _lane_sum(a8)
