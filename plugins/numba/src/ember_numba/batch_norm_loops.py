"""The compiled loops of ember_numba/batch_norm.py over contiguous (N, C, L) arrays: the
per-channel statistics, the normalization and the backward.

PyTorch counterpart: aten/src/ATen/native/cpu/batch_norm_kernel.cpp (v2.13).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit


@ahead_of_time("void({t}[:, :, ::1], {t}, {t}[::1], {t}[::1], {t}[::1])")
@jit
def channel_moments(x, eps, mean, invstd, unbiased):
    # Two passes per channel, the first in float64: NOTE [ Two passes, the first in
    # float64 ] in layer_norm.py.
    samples, channels, length = x.shape
    zero, count = x.dtype.type(0), x.dtype.type(samples * length)
    for c in range(channels):
        total = 0.0
        for n in range(samples):
            for i in range(length):
                total += x[n, c, i]
        m = x.dtype.type(total / (samples * length))
        squares = zero
        for n in range(samples):
            for i in range(length):
                d = x[n, c, i] - m
                squares += d * d
        mean[c] = m
        invstd[c] = 1 / np.sqrt(squares / count + eps)
        # one value: the unbiased variance is NaN, as torch's
        unbiased[c] = squares / (count - 1) if count > 1 else np.nan


@ahead_of_time("void({t}[:, :, ::1], {t}[::1], {t}[::1], {t}[::1], {t}[::1], {t}[:, :, ::1])")
@jit
def normalize_channels(x, weight, bias, mean, invstd, out):
    samples, channels, length = x.shape
    for n in range(samples):
        for c in range(channels):
            scale = invstd[c] * weight[c]
            shift = bias[c] - mean[c] * scale
            for i in range(length):
                out[n, c, i] = x[n, c, i] * scale + shift


@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], {t}[::1], "
               "{t}[::1], {t}[::1], b1, {t}[:, :, ::1], {t}[::1], {t}[::1])")
@jit
def backward_channels(g, x, weight, mean, invstd, training, grad_input, grad_weight, grad_bias):
    # Per channel, with c = x - mean and scale = invstd * weight: the sums of g and of
    # g * c, then grad_input = scale * (g - mean(g) - c * invstd^2 * mean(g * c))
    # in training, scale * g in evaluation.
    samples, channels, length = x.shape
    zero, count = x.dtype.type(0), x.dtype.type(max(samples * length, 1))
    for c in range(channels):
        m, r = mean[c], invstd[c]
        sum_g = zero
        sum_gc = zero
        for n in range(samples):
            for i in range(length):
                sum_g += g[n, c, i]
                sum_gc += g[n, c, i] * (x[n, c, i] - m)
        grad_bias[c] = sum_g
        grad_weight[c] = sum_gc * r
        scale = r * weight[c]
        if training:
            b = -scale * r * r * (sum_gc / count)
            d = -scale * (sum_g / count)
            for n in range(samples):
                for i in range(length):
                    grad_input[n, c, i] = g[n, c, i] * scale + (x[n, c, i] - m) * b + d
        else:
            for n in range(samples):
                for i in range(length):
                    grad_input[n, c, i] = g[n, c, i] * scale
