"""Compiled CPU kernels for ember-norm's group-norm ops: the normalization with its
per-channel affine, and the backward. The statistics are ``norm::layer_norm_stats``
over the (N, G, C/G * spatial) view, served by ember_numba/layer_norm.py.

PyTorch counterpart: aten/src/ATen/native/cpu/group_norm_kernel.cpp
(``GroupNormKernelImplInternal``, ``GroupNormBackwardKernelImplInternal``) (v2.13).

As in layer_norm.py, contiguous float32 and float64 arrays take the compiled loops
and everything else the kernel it replaced (``fallback``: ember-norm's NumPy kernel); NOTE [ One loop per row
instead of whole-array passes ] there says why the loops are faster.
"""

import numpy as np

from ember_numba import arrays
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable, flat_or_filled

loops = Loops("ember_numba.group_norm_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ember-norm's group-norm ops, each kernel taking the one it
    replaces first (NOTE [ Kernels for another plugin's ops ] in ember/plugins/manager.py)."""
    return [("norm::group_norm", group_norm), ("norm::group_norm_backward", group_norm_backward)]


def group_norm(fallback, xp, input, weight, bias, mean, rstd, *, num_groups, eps):
    """``norm::group_norm`` on the cpu device: ``x * scale + shift`` per (sample, channel)."""
    if not compilable(input, weight, bias, mean, rstd):
        return fallback(xp, input, weight, bias, mean, rstd, num_groups=num_groups, eps=eps)
    x = arrays.channels(input)
    channels = x.shape[1]
    out = np.empty_like(x)
    loops.normalize_groups(x, flat_or_filled(weight, 1, channels, x.dtype), flat_or_filled(bias, 0, channels, x.dtype),
                      mean.reshape(-1, num_groups), rstd.reshape(-1, num_groups), out)
    return out.reshape(input.shape)


def group_norm_backward(fallback, xp, grad, input, weight, mean, rstd, *, num_groups):
    """``norm::group_norm_backward`` on the cpu device: grad_input, grad_weight and
    grad_bias (formulas in ember_norm/ops/group_norm.py)."""
    if not compilable(grad, input, weight, mean, rstd) or grad.shape != input.shape:
        return fallback(xp, grad, input, weight, mean, rstd, num_groups=num_groups)
    x, g = arrays.channels(input), arrays.channels(grad)
    channels = x.shape[1]
    grad_input = np.empty_like(x)
    grad_weight = np.zeros(channels, dtype=x.dtype)
    grad_bias = np.zeros(channels, dtype=x.dtype)
    loops.backward_groups(g, x, flat_or_filled(weight, 1, channels, x.dtype), mean.reshape(-1, num_groups),
                     rstd.reshape(-1, num_groups), grad_input, grad_weight, grad_bias)
    return grad_input.reshape(input.shape), grad_weight, grad_bias
