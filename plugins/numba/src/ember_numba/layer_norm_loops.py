"""The compiled loops of ember_numba/layer_norm.py: the statistics, normalization and
backward of each row (NOTE [ One loop per row instead of whole-array passes ] there).

PyTorch counterpart: aten/src/ATen/native/cpu/layer_norm_kernel.cpp (v2.13).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact
from ember_numba.jit import jit
from ember_numba.lane_sums import lane_square_sum, lane_sum

# NOTE [ Two passes, the first in float64 ]
# Each row is read twice while it sits in cache: the mean, then the sum of squared
# deviations about it (no cancellation when |mean| >> std, unlike E[x^2] - mean^2).
# The mean's sum runs in float64 also for float32 input: summed in float32 (eight
# partial sums), the mean came out up to a unit in the last place off (3e-7
# relative; torch's is correctly rounded), and for a row with |mean| >> std that
# error enters the variance as (error / std)^2: rstd 3e-6 off on rows of mean 100
# and std 0.01, against 2e-7 now (torch: 1e-7). It costs 96 us instead of 75 on
# (2048, 256) float32, measured; the squares stay in the input's dtype.


@ahead_of_time("void({t}[:, ::1], {t}, {t}[::1], {t}[::1])")
@jit
def row_moments(x, eps, mean, rstd):
    rows, count = x.shape
    zero, n = x.dtype.type(0), x.dtype.type(count)
    for i in range(rows):
        total = 0.0  # float64: NOTE above
        for j in range(count):
            total += x[i, j]
        m = x.dtype.type(total / count)
        squares = zero
        for j in range(count):
            d = x[i, j] - m
            squares += d * d
        mean[i] = m
        rstd[i] = 1 / np.sqrt(squares / n + eps)


# NOTE [ float64 row moments in a fixed order ]
# row_moments sums with reassociation (NOTE [ Which fast-math flags ] in jit.py): LLVM
# keeps as many partial sums as the machine's vectors have lanes (8 float32 with AVX2,
# 16 with AVX-512) and adds them up in its own order, so the last bit of a sum depends on
# the machine the loop was compiled on. For float32 input the mean is summed in float64
# and rounded to float32, which hides that; a float64 mean has nothing to hide it in: on
# one machine it came out an ulp from the NumPy kernel's, on another not. float64 rows
# therefore take the loop below, compiled without fast-math, whose sums are written as
# vector code in sixteen lanes (NOTE [ A fixed order that still vectorizes ] in
# lane_sums.py): the same bits on every machine and from either build, within an ulp or
# two of the exact mean (as torch's cascaded sum is), at about the speed of row_moments
# (0.10 ms against 0.09 on (2048, 256); a compensated sum in scalar lanes took 0.7-1.1).


@ahead_of_time("void(float64[:, ::1], float64, float64[::1], float64[::1])")
@jit_exact
def ordered_row_moments(x, eps, mean, rstd):
    rows, count = x.shape
    for i in range(rows):
        m = lane_sum(x[i]) / count
        mean[i] = m
        rstd[i] = 1 / np.sqrt(lane_square_sum(x[i], m) / count + eps)


@ahead_of_time("void({t}[:, ::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[:, ::1])")
@jit_exact  # no reassociation: x * rstd - mean * rstd must not become (x - mean) * rstd
def normalize_rows(x, weight, bias, mean, rstd, out):
    # As the reference (and torch's kernel): x * rstd - mean * rstd, each product rounded.
    rows, count = x.shape
    for i in range(rows):
        r = rstd[i]
        shift = mean[i] * r
        for j in range(count):
            out[i, j] = (x[i, j] * r - shift) * weight[j] + bias[j]


@ahead_of_time("void({t}[:, ::1], {t}[:, ::1], {t}[::1], {t}[::1], {t}[::1], "
               "{t}[:, ::1], {t}[::1], {t}[::1])")
@jit
def backward_rows(g, x, weight, mean, rstd, grad_input, grad_weight, grad_bias):
    # Per row, with xhat = (x - mean) * rstd and h = g * weight: the sums of h and of
    # h * xhat, then grad_input = rstd * (h - mean(h) - xhat * mean(h * xhat)).
    rows, count = x.shape
    zero, n = x.dtype.type(0), x.dtype.type(count)
    for i in range(rows):
        m, r = mean[i], rstd[i]
        sum_h = zero
        sum_h_xhat = zero
        for j in range(count):
            xhat = (x[i, j] - m) * r
            h = g[i, j] * weight[j]
            sum_h += h
            sum_h_xhat += h * xhat
            grad_weight[j] += g[i, j] * xhat
            grad_bias[j] += g[i, j]
        mean_h, mean_h_xhat = sum_h / n, sum_h_xhat / n
        for j in range(count):
            xhat = (x[i, j] - m) * r
            grad_input[i, j] = r * (g[i, j] * weight[j] - mean_h - xhat * mean_h_xhat)
