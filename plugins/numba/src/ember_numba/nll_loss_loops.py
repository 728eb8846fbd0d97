"""The compiled loops of ember_numba/nll_loss.py.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (v2.13).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit
from ember_numba.log_softmax_loops import _counted_weight, _share  # the spatial loops' shared pieces


@ahead_of_time("b1({t}[:, ::1], i8[::1], {t}[::1], b1, i8, {t}[::1], {t}[::1])")
@jit
def forward(x, target, weight, weighted, ignore_index, losses, sums):
    """Each row's loss into ``losses``, their sum and the weights' into ``sums``; False
    at a target out of range (and nothing is finished)."""
    classes = x.shape[1]
    total, denominator = x.dtype.type(0), x.dtype.type(0)
    for n in range(x.shape[0]):
        t = target[n]
        if t == ignore_index:
            losses[n] = 0
            continue
        if t < 0 or t >= classes:
            return False
        w = weight[t] if weighted else x.dtype.type(1)
        loss = -w * x[n, t]
        losses[n] = loss
        total += loss
        denominator += w
    sums[0] = total
    sums[1] = denominator
    return True


@ahead_of_time("b1({t}[::1], i8[::1], {t}[::1], b1, i8, b1, {t}[:, ::1])")
@jit
def backward(grads, target, weight, weighted, ignore_index, mean, out):
    """``out[n, t[n]] = -w[t] * grad`` (``grad / denominator`` for the mean, the row's own
    grad for ``grads`` of one per row); False at a target out of range."""
    classes = out.shape[1]
    denominator = out.dtype.type(0)
    for n in range(out.shape[0]):
        t = target[n]
        if t == ignore_index:
            continue
        if t < 0 or t >= classes:
            return False
        denominator += weight[t] if weighted else out.dtype.type(1)
    scale = grads[0]
    if mean:  # weights that sum to 0: nan at each target not ignored, as in torch
        scale = scale / denominator if denominator != 0 else out.dtype.type(np.nan)
    for n in range(out.shape[0]):
        t = target[n]
        if t != ignore_index:
            g = grads[n] if grads.size > 1 else scale
            out[n, t] = -((weight[t] if weighted else out.dtype.type(1)) * g)
    return True


# Spatial targets: (N, C, L) log-probabilities and (N, L) targets, one position at a time
# (a gather, nothing to vectorize). The losses are reduced by the kernel (NumPy's
# pairwise sum: a map has thousands of positions, which a float32 running sum would
# round); the weights counted are summed here in float64.
@ahead_of_time("b1({t}[:, :, ::1], i8[:, ::1], {t}[::1], b1, i8, {t}[:, ::1], {t}[::1])")
@jit
def spatial_forward(x, target, weight, weighted, ignore_index, losses, sums):
    """Each position's ``-w[t] * x[n, t, k]`` into ``losses`` (0 where ignored), the sum
    of the ``w[t]`` counted into ``sums[0]``; False at a target out of range."""
    classes = x.shape[1]
    denominator = 0.0
    for n in range(x.shape[0]):
        for k in range(x.shape[2]):
            t = target[n, k]
            if t == ignore_index:
                losses[n, k] = 0
                continue
            if t < 0 or t >= classes:
                return False
            w = weight[t] if weighted else x.dtype.type(1)
            losses[n, k] = -w * x[n, t, k]
            denominator += w
    sums[0] = denominator
    return True


@ahead_of_time("b1({t}[:, ::1], i8[:, ::1], {t}[::1], b1, i8, b1, {t}[:, :, ::1])")
@jit
def spatial_backward(grads, target, weight, weighted, ignore_index, mean, out):
    """``out[n, t, k] = -w[t] * grad`` (``grad / denominator`` for the mean, the
    position's own for ``grads`` of one per position) into zeros; False at a target out
    of range."""
    one = out.dtype.type(1)
    in_range, denominator = _counted_weight(target, weight, weighted, ignore_index, out.shape[1])
    if not in_range:
        return False
    each = grads.size > 1
    for n in range(out.shape[0]):
        for k in range(out.shape[2]):
            t = target[n, k]
            if t != ignore_index:
                w = weight[t] if weighted else one
                g = grads[n, k] if each else grads[0, 0]
                out[n, t, k] = -(_share(w, denominator) * g if mean else w * g)
    return True

