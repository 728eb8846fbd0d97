"""The loops of ember_numba/im2col.py (NOTE [ A compiled im2col ] there), in a module
of their own: it imports numba, which ember_numba/im2col.py imports on first use.

PyTorch counterpart: aten/src/ATen/native/im2col.h (v2.13).
"""

import numba
from numba import uint64 as u

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@numba.njit(cache=True)  # called from the loops below, compiled with them
def _inside(OW, W, sw, offset):
    """The outputs ``[lo, hi)`` along a row whose tap reads ``ow * sw + offset`` inside
    ``[0, W)``."""
    lo = 0
    if offset < 0:
        lo = min(OW, (sw - 1 - offset) // sw)
    hi = OW
    if (OW - 1) * sw + offset > W - 1:
        hi = (W - 1 - offset) // sw + 1 if W - 1 - offset >= 0 else 0
    return lo, max(lo, hi)


@ahead_of_time("void({t}[::1], {t}[::1], i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def im2col_loop(x, out, n, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """``out`` (C*kh*kw rows of n*OH*OW) from the flat images ``x``."""
    L = OH * OW
    ld = n * L
    shifted = sh == 1 and sw == 1 and OW == W  # a row is the plane shifted (NOTE above)
    for m in range(n):
        for c in range(C):
            plane = (m * C + c) * H * W
            for i in range(kh):
                for j in range(kw):
                    d0 = ((c * kh + i) * kw + j) * ld + m * L
                    off = j * dw - pw
                    if shifted:
                        shift = (i * dh - ph) * W + off
                        lo, hi = max(0, -shift), max(0, min(L, H * W - shift))
                        lo = min(lo, hi)
                        for t in range(lo):
                            out[u(d0 + t)] = 0
                        for t in range(lo, hi):
                            out[u(d0 + t)] = x[u(plane + shift + t)]
                        for t in range(hi, L):
                            out[u(d0 + t)] = 0
                        if off != 0:  # the taps that wrapped round a row read padding
                            first, last = (0, -off) if off < 0 else (W - off, W)
                            for oh in range(OH):
                                for ow in range(first, last):
                                    out[u(d0 + oh * W + ow)] = 0
                        continue
                    lo, hi = _inside(OW, W, sw, off)
                    for oh in range(OH):
                        ih = oh * sh - ph + i * dh
                        d = d0 + oh * OW
                        if ih < 0 or ih >= H:
                            for ow in range(OW):
                                out[u(d + ow)] = 0
                            continue
                        s = plane + ih * W + off
                        for ow in range(lo):
                            out[u(d + ow)] = 0
                        if sw == 1:
                            for ow in range(lo, hi):
                                out[u(d + ow)] = x[u(s + ow)]
                        else:
                            for ow in range(lo, hi):
                                out[u(d + ow)] = x[u(s + ow * sw)]
                        for ow in range(hi, OW):
                            out[u(d + ow)] = 0


@ahead_of_time("void({t}[::1], {t}[::1], i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def col2im_loop(columns, image, n, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Add ``columns`` (C*kh*kw rows of n*OH*OW) onto the flat images ``image``, each
    pixel's taps in order (i, j), as the NumPy kernel's slice-adds do."""
    L = OH * OW
    ld = n * L
    for m in range(n):
        for c in range(C):
            plane = (m * C + c) * H * W
            for i in range(kh):
                for j in range(kw):
                    d0 = ((c * kh + i) * kw + j) * ld + m * L
                    off = j * dw - pw
                    lo, hi = _inside(OW, W, sw, off)
                    for oh in range(OH):
                        ih = oh * sh - ph + i * dh
                        if ih < 0 or ih >= H:
                            continue
                        d = d0 + oh * OW
                        s = plane + ih * W + off
                        if sw == 1:
                            for ow in range(lo, hi):
                                image[u(s + ow)] += columns[u(d + ow)]
                        else:
                            for ow in range(lo, hi):
                                image[u(s + ow * sw)] += columns[u(d + ow)]
