"""Compiled CPU kernels for ember-norm's group-norm ops: the normalization with its
per-channel affine, and the backward. The statistics are ``norm::layer_norm_stats``
over the (N, G, C/G * spatial) view, served by ember_numba/layer_norm.py.

PyTorch counterpart: aten/src/ATen/native/cpu/group_norm_kernel.cpp
(``GroupNormKernelImplInternal``, ``GroupNormBackwardKernelImplInternal``) (v2.13).

As in layer_norm.py, contiguous float32 and float64 arrays take the compiled loops
and everything else ember-norm's NumPy kernel (``op.generic``); NOTE [ One loop per row
instead of whole-array passes ] there says why the loops are faster.
"""

import numpy as np

from ember_norm.ops import group_norm as ops
from ember_numba import arrays
from ember_numba.arrays import compilable, flat_or_filled
from ember_numba.jit import jit


def group_norm(xp, input, weight, bias, mean, rstd, *, num_groups, eps):
    """``norm::group_norm`` on the cpu device: ``x * scale + shift`` per (sample, channel)."""
    if not compilable(input, weight, bias, mean, rstd):
        return ops.group_norm.generic(xp, input, weight, bias, mean, rstd, num_groups=num_groups, eps=eps)
    x = arrays.channels(input)
    channels = x.shape[1]
    out = np.empty_like(x)
    _normalize_groups(x, flat_or_filled(weight, 1, channels, x.dtype), flat_or_filled(bias, 0, channels, x.dtype),
                      mean.reshape(-1, num_groups), rstd.reshape(-1, num_groups), out)
    return out.reshape(input.shape)


@jit
def _normalize_groups(x, weight, bias, mean, rstd, out):
    # y = (x - mean) * rstd * weight + bias = x * scale + shift, scale and shift per
    # (sample, channel), as torch computes it.
    samples, channels, length = x.shape
    per_group = channels // mean.shape[1]
    for n in range(samples):
        for c in range(channels):
            group = c // per_group
            scale = rstd[n, group] * weight[c]
            shift = bias[c] - mean[n, group] * scale
            for i in range(length):
                out[n, c, i] = x[n, c, i] * scale + shift


def group_norm_backward(xp, grad, input, weight, mean, rstd, *, num_groups):
    """``norm::group_norm_backward`` on the cpu device: grad_input, grad_weight and
    grad_bias (formulas in ember_norm/ops/group_norm.py)."""
    if not compilable(grad, input, weight, mean, rstd) or grad.shape != input.shape:
        return ops.group_norm_backward.generic(xp, grad, input, weight, mean, rstd, num_groups=num_groups)
    x, g = arrays.channels(input), arrays.channels(grad)
    channels = x.shape[1]
    grad_input = np.empty_like(x)
    grad_weight = np.zeros(channels, dtype=x.dtype)
    grad_bias = np.zeros(channels, dtype=x.dtype)
    _backward_groups(g, x, flat_or_filled(weight, 1, channels, x.dtype), mean.reshape(-1, num_groups),
                     rstd.reshape(-1, num_groups), grad_input, grad_weight, grad_bias)
    return grad_input.reshape(input.shape), grad_weight, grad_bias


@jit
def _backward_groups(g, x, weight, mean, rstd, grad_input, grad_weight, grad_bias):
    # Per (sample, group), with c = x - mean, xhat = c * rstd and h = g * weight[channel]:
    # first the sums of g and g * c per channel (no cancellation, as c is centered),
    # then grad_input = rstd * (h - mean(h) - xhat * mean(h * xhat))
    #                 = g * (rstd * weight) + c * b + d  with b, d per group.
    samples, channels, length = x.shape
    groups = mean.shape[1]
    per_group = channels // groups
    zero, count = x.dtype.type(0), x.dtype.type(per_group * length)
    for n in range(samples):
        for group in range(groups):
            m, r = mean[n, group], rstd[n, group]
            sum_h = zero
            sum_h_xhat = zero
            for c in range(group * per_group, (group + 1) * per_group):
                sum_g = zero
                sum_gc = zero
                for i in range(length):
                    sum_g += g[n, c, i]
                    sum_gc += g[n, c, i] * (x[n, c, i] - m)
                grad_bias[c] += sum_g
                grad_weight[c] += sum_gc * r
                sum_h += sum_g * weight[c]
                sum_h_xhat += sum_gc * r * weight[c]
            b = -r * r * (sum_h_xhat / count)
            d = -r * (sum_h / count)
            for c in range(group * per_group, (group + 1) * per_group):
                a = r * weight[c]
                for i in range(length):
                    grad_input[n, c, i] = g[n, c, i] * a + (x[n, c, i] - m) * b + d
