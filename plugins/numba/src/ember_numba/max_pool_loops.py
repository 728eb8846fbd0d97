"""The compiled loop of ember_numba/max_pool.py (NOTE there).

PyTorch counterpart: aten/src/ATen/native/cpu/MaxPoolKernel.cpp (v2.13).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit


@ahead_of_time("void({t}[:, :, :, ::1], {t}[:, :, :, ::1], i8, i8, i8, i8, i8, i8, i8, i8)")
@jit  # NOTE in max_pool.py; comparisons only, so the fast-math flags change nothing
def max_pixels(x, out, kh, kw, sh, sw, ph, pw, dh, dw):
    samples, height, width, channels = x.shape
    _, out_height, out_width, _ = out.shape
    # one pixel's maxima in a buffer of its own, stored once: updating ``out`` in place
    # kept LLVM from vectorizing the channel loop (3.8 ms against 0.57 on (32, 64, 8, 8))
    best = np.empty(channels, dtype=x.dtype)
    for n in range(samples):
        for oh in range(out_height):
            for ow in range(out_width):
                best[:] = -np.inf
                for i in range(kh):
                    ih = oh * sh - ph + i * dh
                    if ih < 0 or ih >= height:
                        continue
                    for j in range(kw):
                        iw = ow * sw - pw + j * dw
                        if iw < 0 or iw >= width:
                            continue
                        tap = x[n, ih, iw]
                        for c in range(channels):
                            # torch's rule, greater or NaN, as a select: max(b, v) keeps
                            # b on a tie and once b is NaN
                            v = tap[c]
                            best[c] = max(best[c], v) if v == v else v
                out[n, oh, ow] = best
