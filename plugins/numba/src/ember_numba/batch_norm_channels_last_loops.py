"""The compiled batch-norm loops for channels_last inputs: the (N, C, *) array is read
as its (N * L, C) rows, one value per channel in each, so every loop runs along the
channels with one accumulator or factor per channel.

PyTorch counterpart: aten/src/ATen/native/cpu/batch_norm_kernel.cpp
(``batch_norm_cpu_collect_stats_channels_last_impl``,
``batch_norm_cpu_backward_channels_last_impl``) (v2.13).

Called from batch_norm.py when an input is not C-contiguous but channels-last; the
sums run in float64 per channel (a column of N * L values is summed in order, not in
partial sums, so float32 would lose digits on large batches).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit


@ahead_of_time("void({t}[:, ::1], {t}, {t}[::1], {t}[::1], {t}[::1])")
@jit
def column_moments(x, eps, mean, invstd, unbiased):
    rows, channels = x.shape
    total = np.zeros(channels)
    for r in range(rows):
        for c in range(channels):
            total[c] += x[r, c]
    m = np.empty(channels, dtype=x.dtype)
    for c in range(channels):
        m[c] = total[c] / rows
    squares = np.zeros(channels)
    for r in range(rows):
        for c in range(channels):
            d = x[r, c] - m[c]
            squares[c] += d * d
    for c in range(channels):
        mean[c] = m[c]
        invstd[c] = 1 / np.sqrt(squares[c] / rows + eps)
        unbiased[c] = squares[c] / (rows - 1) if rows > 1 else np.nan


@ahead_of_time("void({t}[:, ::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[:, ::1])")
@jit
def normalize_columns(x, weight, bias, mean, invstd, out):
    rows, channels = x.shape
    scale = invstd * weight
    shift = bias - mean * scale
    for r in range(rows):
        for c in range(channels):
            out[r, c] = x[r, c] * scale[c] + shift[c]


@ahead_of_time("void({t}[:, ::1], {t}[:, ::1], {t}[::1], {t}[::1], {t}[::1], b1, {t}[:, ::1], {t}[::1], {t}[::1])")
@jit
def backward_columns(g, x, weight, mean, invstd, training, grad_input, grad_weight, grad_bias):
    # As batch_norm.py's _backward_channels, with the per-channel sums and factors
    # held in arrays along the row.
    rows, channels = x.shape
    sum_g = np.zeros(channels)
    sum_gc = np.zeros(channels)
    for r in range(rows):
        for c in range(channels):
            sum_g[c] += g[r, c]
            sum_gc[c] += g[r, c] * (x[r, c] - mean[c])
    scale = invstd * weight
    b = np.empty_like(scale)
    d = np.empty_like(scale)
    for c in range(channels):
        grad_bias[c] = sum_g[c]
        grad_weight[c] = sum_gc[c] * invstd[c]
        b[c] = -scale[c] * invstd[c] * invstd[c] * (sum_gc[c] / rows)
        d[c] = -scale[c] * (sum_g[c] / rows)
    for r in range(rows):
        if training:
            for c in range(channels):
                grad_input[r, c] = g[r, c] * scale[c] + (x[r, c] - mean[c]) * b[c] + d[c]
        else:
            for c in range(channels):
                grad_input[r, c] = g[r, c] * scale[c]
