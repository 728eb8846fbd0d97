"""Compiled CPU kernels for ember-norm's layer-norm ops: statistics, normalization and
backward, one row at a time.

PyTorch counterpart: aten/src/ATen/native/cpu/layer_norm_kernel.cpp
(``LayerNormKernelImplInternal``, ``LayerNormBackwardKernelImplInternal``) (v2.13).

Each override serves contiguous float32 and float64 arrays and hands everything else
to ember-norm's NumPy kernel (``op.generic``), so the results never depend on whether
this plugin is installed beyond rounding. Statistics accumulate in the input's dtype,
as torch's float kernels do (``opmath`` of float32 is float).

# NOTE [ One loop per row instead of whole-array passes ]
# A NumPy kernel is a sequence of whole-array passes; each reads and writes the 524K
# values of a (2048, 256) float32 input (about 0.07-0.12 ms), and a pass with a
# per-row (R, 1) operand costs about twice that (the inner loop restarts for every
# row of 256 values; 0.2 ms measured). ember-norm's kernels need about four such
# passes forward and seven backward. The loops below instead visit each row while it
# sits in the L1 cache: the forward reads the input twice for the statistics and once
# more to write the output; the backward reads grad and input once for the row sums
# and once for grad_input, and accumulates grad_weight and grad_bias on the way.
"""

import numpy as np

from ember_norm.ops import layer_norm as ops
from ember_numba.arrays import compilable, flat_or_filled
from ember_numba.jit import jit


def _normalized_numel(input, normalized_ndim):
    numel = 1
    for size in input.shape[input.ndim - normalized_ndim:]:
        numel *= size
    return numel


def layer_norm_stats(xp, input, *, normalized_ndim, eps):
    """``norm::layer_norm_stats`` on the cpu device: mean and rstd of each row."""
    if not compilable(input):
        return ops.layer_norm_stats.generic(xp, input, normalized_ndim=normalized_ndim, eps=eps)
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    mean = np.empty(rows.shape[0], dtype=input.dtype)
    rstd = np.empty_like(mean)
    _row_moments(rows, input.dtype.type(eps), mean, rstd)
    stats_shape = input.shape[:input.ndim - normalized_ndim] + (1,) * normalized_ndim
    return mean.reshape(stats_shape), rstd.reshape(stats_shape)


# NOTE [ Two passes, the first in float64 ]
# Each row is read twice while it sits in cache: the mean, then the sum of squared
# deviations about it (no cancellation when |mean| >> std, unlike E[x^2] - mean^2).
# The mean's sum runs in float64 also for float32 input: summed in float32 (eight
# partial sums), the mean came out up to a unit in the last place off (3e-7
# relative; torch's is correctly rounded), and for a row with |mean| >> std that
# error enters the variance as (error / std)^2: rstd 3e-6 off on rows of mean 100
# and std 0.01, against 2e-7 now (torch: 1e-7). It costs 96 us instead of 75 on
# (2048, 256) float32, measured; the squares stay in the input's dtype.


@jit
def _row_moments(x, eps, mean, rstd):
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


def layer_norm(xp, input, weight, bias, mean, rstd, *, normalized_ndim, eps):
    """``norm::layer_norm`` on the cpu device: ``(x - mean) * rstd * weight + bias``."""
    if not compilable(input, weight, bias, mean, rstd):
        return ops.layer_norm.generic(xp, input, weight, bias, mean, rstd,
                                      normalized_ndim=normalized_ndim, eps=eps)
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    out = np.empty_like(rows)
    weight = flat_or_filled(weight, 1, numel, rows.dtype)
    bias = flat_or_filled(bias, 0, numel, rows.dtype)
    _normalize_rows(rows, weight, bias, mean.reshape(-1), rstd.reshape(-1), out)
    return out.reshape(input.shape)


@jit
def _normalize_rows(x, weight, bias, mean, rstd, out):
    rows, count = x.shape
    for i in range(rows):
        m, r = mean[i], rstd[i]
        for j in range(count):
            out[i, j] = (x[i, j] - m) * r * weight[j] + bias[j]


def layer_norm_backward(xp, grad, input, weight, mean, rstd, *, normalized_ndim):
    """``norm::layer_norm_backward`` on the cpu device: grad_input, grad_weight and
    grad_bias (formulas in ember_norm/ops/layer_norm.py)."""
    if not compilable(grad, input, weight, mean, rstd) or grad.shape != input.shape:
        return ops.layer_norm_backward.generic(xp, grad, input, weight, mean, rstd,
                                               normalized_ndim=normalized_ndim)
    normalized_shape = input.shape[input.ndim - normalized_ndim:]
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    grad_input = np.empty_like(rows)
    grad_weight = np.zeros(numel, dtype=input.dtype)
    grad_bias = np.zeros(numel, dtype=input.dtype)
    _backward_rows(grad.reshape(-1, numel), rows, flat_or_filled(weight, 1, numel, rows.dtype), mean.reshape(-1),
                   rstd.reshape(-1), grad_input, grad_weight, grad_bias)
    return grad_input.reshape(input.shape), grad_weight.reshape(normalized_shape), grad_bias.reshape(normalized_shape)


@jit
def _backward_rows(g, x, weight, mean, rstd, grad_input, grad_weight, grad_bias):
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
