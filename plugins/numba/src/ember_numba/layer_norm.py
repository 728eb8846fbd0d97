"""Compiled CPU kernels for ember-norm's layer-norm ops: statistics, normalization and
backward, one row at a time.

PyTorch counterpart: aten/src/ATen/native/cpu/layer_norm_kernel.cpp
(``LayerNormKernelImplInternal``, ``LayerNormBackwardKernelImplInternal``) (v2.13).

Each override serves contiguous float32 and float64 arrays and hands everything else
to the kernel it replaced (``fallback``: ember-norm's NumPy kernel), so the results never depend on whether
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

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable, flat_or_filled

loops = Loops("ember_numba.layer_norm_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ember-norm's layer-norm ops, each kernel taking the one it
    replaces first (NOTE [ Kernels for another plugin's ops ] in ember/plugins/manager.py)."""
    return [("norm::layer_norm_stats", layer_norm_stats), ("norm::layer_norm", layer_norm),
            ("norm::layer_norm_backward", layer_norm_backward)]


def _normalized_numel(input, normalized_ndim):
    numel = 1
    for size in input.shape[input.ndim - normalized_ndim:]:
        numel *= size
    return numel


def layer_norm_stats(fallback, xp, input, *, normalized_ndim, eps):
    """``norm::layer_norm_stats`` on the cpu device: mean and rstd of each row."""
    if not compilable(input):
        return fallback(xp, input, normalized_ndim=normalized_ndim, eps=eps)
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    mean = np.empty(rows.shape[0], dtype=input.dtype)
    rstd = np.empty_like(mean)
    # float64: a fixed order on every machine (NOTE [ float64 row moments in a fixed order ])
    moments = loops.ordered_row_moments if input.dtype == np.float64 else loops.row_moments
    moments(rows, input.dtype.type(eps), mean, rstd)
    stats_shape = input.shape[:input.ndim - normalized_ndim] + (1,) * normalized_ndim
    return mean.reshape(stats_shape), rstd.reshape(stats_shape)


def layer_norm(fallback, xp, input, weight, bias, mean, rstd, *, normalized_ndim, eps):
    """``norm::layer_norm`` on the cpu device: ``(x - mean) * rstd * weight + bias``."""
    if not compilable(input, weight, bias, mean, rstd):
        return fallback(xp, input, weight, bias, mean, rstd,
                        normalized_ndim=normalized_ndim, eps=eps)
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    out = np.empty_like(rows)
    weight = flat_or_filled(weight, 1, numel, rows.dtype)
    bias = flat_or_filled(bias, 0, numel, rows.dtype)
    loops.normalize_rows(rows, weight, bias, mean.reshape(-1), rstd.reshape(-1), out)
    return out.reshape(input.shape)


def layer_norm_backward(fallback, xp, grad, input, weight, mean, rstd, *, normalized_ndim):
    """``norm::layer_norm_backward`` on the cpu device: grad_input, grad_weight and
    grad_bias (formulas in ember_norm/ops/layer_norm.py)."""
    if not compilable(grad, input, weight, mean, rstd) or grad.shape != input.shape:
        return fallback(xp, grad, input, weight, mean, rstd, normalized_ndim=normalized_ndim)
    normalized_shape = input.shape[input.ndim - normalized_ndim:]
    numel = _normalized_numel(input, normalized_ndim)
    rows = input.reshape(-1, numel)
    grad_input = np.empty_like(rows)
    grad_weight = np.zeros(numel, dtype=input.dtype)
    grad_bias = np.zeros(numel, dtype=input.dtype)
    loops.backward_rows(grad.reshape(-1, numel), rows, flat_or_filled(weight, 1, numel, rows.dtype), mean.reshape(-1),
                   rstd.reshape(-1), grad_input, grad_weight, grad_bias)
    return grad_input.reshape(input.shape), grad_weight.reshape(normalized_shape), grad_bias.reshape(normalized_shape)
