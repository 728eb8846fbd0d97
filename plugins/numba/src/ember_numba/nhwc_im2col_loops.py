"""The loops of ember_numba/nhwc_im2col.py (NOTE [ A compiled NHWC im2col ] there), in
a module of their own: it imports numba, which ember_numba/nhwc_im2col.py imports on
first use.

PyTorch counterpart: aten/src/ATen/native/im2col.h (v2.13).
"""

from numba import uint64 as u

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[::1], {t}[::1], i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def nhwc_rows_loop(x, rows, n, H, W, C, G, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """``rows`` ``(G, n, OH, OW, kh, kw, C/G)`` from the flat NHWC images ``x``."""
    Cg = C // G
    run = kw * Cg
    d = 0
    for gi in range(G):
        for m in range(n):
            for oh in range(OH):
                for ow in range(OW):
                    w0 = ow * sw - pw
                    whole = dw == 1 and w0 >= 0 and w0 + kw <= W  # every tap of a row inside
                    for i in range(kh):
                        ih = oh * sh - ph + i * dh
                        if ih < 0 or ih >= H:
                            for t in range(run):
                                rows[u(d + t)] = 0
                            d += run
                            continue
                        line = (m * H + ih) * W
                        if whole and G == 1:  # kw taps of C channels: one contiguous run
                            s = (line + w0) * C
                            for t in range(run):
                                rows[u(d + t)] = x[u(s + t)]
                            d += run
                            continue
                        for j in range(kw):
                            iw = w0 + j * dw
                            if iw < 0 or iw >= W:
                                for c in range(Cg):
                                    rows[u(d + c)] = 0
                            else:
                                s = (line + iw) * C + gi * Cg
                                for c in range(Cg):
                                    rows[u(d + c)] = x[u(s + c)]
                            d += Cg


@ahead_of_time("void({t}[::1], {t}[::1], i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8)")
@jit_exact
def nhwc_col2im_loop(grads, image, n, H, W, C, G, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Add ``grads`` ``(G, n, OH, OW, kh, kw, C/G)`` onto the flat NHWC images ``image``,
    each pixel's taps in order (i, j), as the NumPy kernel's slice-adds do."""
    Cg = C // G
    taps = kh * kw * Cg
    for i in range(kh):
        for j in range(kw):
            for gi in range(G):
                for m in range(n):
                    for oh in range(OH):
                        ih = oh * sh - ph + i * dh
                        if ih < 0 or ih >= H:
                            continue
                        for ow in range(OW):
                            iw = ow * sw - pw + j * dw
                            if iw < 0 or iw >= W:
                                continue
                            s = ((m * H + ih) * W + iw) * C + gi * Cg
                            d = (((gi * n + m) * OH + oh) * OW + ow) * taps + (i * kw + j) * Cg
                            for c in range(Cg):
                                image[u(s + c)] += grads[u(d + c)]
