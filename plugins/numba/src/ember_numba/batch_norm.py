"""Compiled CPU kernels for ember-norm's batch-norm ops: per-channel statistics, the
normalization and the backward over contiguous (N, C, *) arrays. InstanceNorm runs
these ops on its (1, N*C, *) view (ember_norm/functional.py), so it takes them too.

PyTorch counterpart: aten/src/ATen/native/cpu/batch_norm_kernel.cpp
(``batch_norm_cpu_collect_stats_contiguous_impl``,
``batch_norm_cpu_backward_contiguous_impl``) (v2.13).

As in layer_norm.py, contiguous float32 and float64 arrays take the compiled loops,
channels_last ones the loops of batch_norm_channels_last.py, and everything else
(other strides, 1-d inputs, other dtypes) the kernel it replaced (``fallback``:
ember-norm's NumPy kernel). Each channel is
visited as N rows of L values: the statistics read it twice (mean, then squared
deviations), the normalization once, the backward twice.
"""

import numpy as np

from ember_numba import arrays
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable, flat_or_filled

loops = Loops("ember_numba.batch_norm_loops")
channels_last = Loops("ember_numba.batch_norm_channels_last_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ember-norm's batch-norm ops, each kernel taking the one it
    replaces first (NOTE [ Kernels for another plugin's ops ] in ember/plugins/manager.py)."""
    return [("norm::batch_norm_stats", batch_norm_stats), ("norm::batch_norm", batch_norm),
            ("norm::batch_norm_backward", batch_norm_backward)]


def batch_norm_stats(fallback, xp, input, *, eps):
    """``norm::batch_norm_stats`` on the cpu device: per-channel mean, invstd and
    unbiased variance."""
    if input.ndim < 2:
        return fallback(xp, input, eps=eps)
    mean = np.empty(input.shape[1], dtype=input.dtype)
    invstd, unbiased = np.empty_like(mean), np.empty_like(mean)
    if compilable(input):
        loops.channel_moments(arrays.channels(input), input.dtype.type(eps), mean, invstd, unbiased)
        return mean, invstd, unbiased
    rows = arrays.channels_last_rows(input)
    if rows is not None and compilable(rows):
        channels_last.column_moments(rows, input.dtype.type(eps), mean, invstd, unbiased)
        return mean, invstd, unbiased
    return fallback(xp, input, eps=eps)


def batch_norm(fallback, xp, input, weight, bias, mean, invstd, *, training, eps):
    """``norm::batch_norm`` on the cpu device: ``x * scale + shift`` per channel."""
    if input.ndim < 2 or not compilable(mean, invstd, weight, bias):
        return fallback(xp, input, weight, bias, mean, invstd, training=training, eps=eps)
    channels = input.shape[1]
    w, b = flat_or_filled(weight, 1, channels, mean.dtype), flat_or_filled(bias, 0, channels, mean.dtype)
    if compilable(input, mean):
        x = arrays.channels(input)
        out = np.empty_like(x)
        loops.normalize_channels(x, w, b, mean, invstd, out)
        return out.reshape(input.shape)
    rows = arrays.channels_last_rows(input)
    if rows is not None and compilable(rows, mean):
        out, out_rows = arrays.empty_channels_last(input)
        channels_last.normalize_columns(rows, w, b, mean, invstd, out_rows)
        return out
    return fallback(xp, input, weight, bias, mean, invstd, training=training, eps=eps)


def batch_norm_backward(fallback, xp, grad, input, weight, mean, invstd, *, training):
    """``norm::batch_norm_backward`` on the cpu device: grad_input, grad_weight and
    grad_bias (formulas in ember_norm/ops/batch_norm.py)."""
    if input.ndim < 2 or grad.shape != input.shape or not compilable(mean, invstd, weight):
        return fallback(xp, grad, input, weight, mean, invstd, training=training)
    channels = input.shape[1]
    filled = flat_or_filled(weight, 1, channels, mean.dtype)
    grad_weight, grad_bias = np.empty(channels, dtype=mean.dtype), np.empty(channels, dtype=mean.dtype)
    if compilable(grad, input, mean):
        x, g = arrays.channels(input), arrays.channels(grad)
        grad_input = np.empty_like(x)
        loops.backward_channels(g, x, filled, mean, invstd, training, grad_input, grad_weight, grad_bias)
        return grad_input.reshape(input.shape), grad_weight, grad_bias
    rows, grad_rows = arrays.channels_last_rows(input), arrays.channels_last_rows(grad)
    if rows is not None and grad_rows is not None and compilable(grad_rows, rows, mean):
        grad_input, grad_input_rows = arrays.empty_channels_last(input)
        channels_last.backward_columns(grad_rows, rows, filled, mean, invstd, training, grad_input_rows,
                                       grad_weight, grad_bias)
        return grad_input, grad_weight, grad_bias
    return fallback(xp, grad, input, weight, mean, invstd, training=training)
