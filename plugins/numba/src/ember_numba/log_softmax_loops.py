"""The compiled loops of ember_numba/log_softmax.py, in a module of their own because
they import numba (through ember_numba/vector_exp.py) when they are defined: the
kernels import this module at their first call.

PyTorch counterpart: aten/src/ATen/native/cpu/SoftMaxKernel.cpp
(``_vec_log_softmax_lastdim``, ``_vec_log_softmax_backward``; ``_vec_log_softmax`` along
other dims) (v2.13).
"""

import math

import numba
import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import FASTMATH
from ember_numba.vector_exp import row_max, vector_exp

compile = numba.njit(fastmath=set(FASTMATH), cache=True)  # NOTE [ Which fast-math flags ] in jit.py
compile_exact = numba.njit(cache=True)  # no fast-math: NOTE below


# NOTE [ The output in torch's order ]
# Each output is ``(x - max) - log(sum)``, as torch computes it. Allowed to reassociate,
# LLVM computes ``x - (max + log(sum))`` instead, one subtraction per value fewer, and
# ``max + log(sum)`` rounds at the magnitude of the max: for float32 logits near 1e4 the
# outputs came out 2.5e-4 off (torch: 5e-7). So only the sum of exponentials is
# compiled with jit.py's flags (it needs them to vectorize); the loop that writes the
# outputs is compiled without any, and stays SIMD code, having no reduction.
@ahead_of_time("void({t}[:, ::1], {t}[:, ::1])")
@compile_exact
def forward_rows(x, out):
    """``out[i] = log_softmax(x[i])`` for each row ``i`` of the 2-d ``x``, in torch's
    order: ``(x - max) - log(sum(exp(x - max)))``."""
    for i in range(x.shape[0]):
        row, result = x[i], out[i]
        top = row_max(row)
        shift = math.log(_exp_sum(row, top))
        for j in range(row.size):
            result[j] = (row[j] - top) - shift


@compile
def _exp_sum(row, top):
    total = row.dtype.type(0)
    for j in range(row.size):
        total += vector_exp(row[j] - top)
    return total


@ahead_of_time("void({t}[:, ::1], {t}[:, ::1], {t}[:, ::1])")
@compile
def backward_rows(grad, output, out):
    """``out[i] = grad[i] - exp(output[i]) * sum(grad[i])`` for each row ``i``."""
    for i in range(grad.shape[0]):
        g, y, result = grad[i], output[i], out[i]
        total = g.dtype.type(0)
        for j in range(g.size):
            total += g[j]
        for j in range(g.size):
            result[j] = g[j] - vector_exp(y[j]) * total


# NOTE [ log_softmax along a dim that is not the last ]
# Along dim 1 of a contiguous (N, C, H, W) array, each (n, h, w) position's C values lie
# H * W apart: a row loop would stride through memory. As PyTorch's
# ``_vec_log_softmax`` does, the loops keep the contiguous inner positions as the vector
# lanes and walk the reduced dim one contiguous line at a time: a running max per inner
# position, then a running sum of exponentials, then the outputs, each a pass of
# elementwise arithmetic over a line (no reduction across lanes, so no fast-math is
# needed to vectorize it, and the sums add along the dim in its order, as torch's do).
# The inner positions are taken a block at a time, so that the block's C lines stay in
# the L2 cache across the three passes (a block of one L1's size measured slower: each
# line is a call, and (8, 21, 1024) float32 took 870 us in blocks of 32 against 340
# whole, torch 225). A NaN in a column makes that column's sum NaN, and so all its
# outputs, as in torch; ``-inf`` everywhere gives NaN (``-inf - -inf``).
@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], {t}[::1], {t}[::1], i8)")
@compile_exact
def forward_columns(x, out, top, total, block):
    """``out[o, :, k] = log_softmax(x[o, :, k])`` for each outer ``o`` and inner ``k``,
    in torch's order, ``block`` inner positions at a time (``top`` and ``total`` hold
    ``block`` values each)."""
    classes, inner = x.shape[1], x.shape[2]
    for o in range(x.shape[0]):
        for start in range(0, inner, block):
            stop = min(start + block, inner)
            high, sums = top[:stop - start], total[:stop - start]
            _line_max(x[o], start, stop, high)
            sums[:] = 0
            for c in range(classes):
                _add_exps(x[o, c, start:stop], high, sums)
            for j in range(sums.size):
                sums[j] = math.log(sums[j])
            for c in range(classes):
                _shifted(x[o, c, start:stop], high, sums, out[o, c, start:stop])


@compile_exact
def _line_max(lines, start, stop, high):
    high[:] = lines[0, start:stop]
    for c in range(1, lines.shape[0]):
        line = lines[c, start:stop]
        for j in range(line.size):
            v = line[j]
            high[j] = v if v > high[j] else high[j]


@compile_exact
def _add_exps(line, high, sums):
    for j in range(line.size):
        sums[j] += vector_exp(line[j] - high[j])


@compile_exact
def _shifted(line, high, shift, result):
    for j in range(line.size):
        result[j] = (line[j] - high[j]) - shift[j]


@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], {t}[:, :, ::1], {t}[::1], i8)")
@compile_exact
def backward_columns(grad, output, out, total, block):
    """``out[o, :, k] = grad[o, :, k] - exp(output[o, :, k]) * sum(grad[o, :, k])``,
    ``block`` inner positions at a time (NOTE [ log_softmax along a dim that is not
    the last ])."""
    classes, inner = grad.shape[1], grad.shape[2]
    for o in range(grad.shape[0]):
        for start in range(0, inner, block):
            stop = min(start + block, inner)
            sums = total[:stop - start]
            sums[:] = 0
            for c in range(classes):
                _add(grad[o, c, start:stop], sums)
            for c in range(classes):
                _gradient(grad[o, c, start:stop], output[o, c, start:stop], sums, out[o, c, start:stop])


@compile_exact
def _add(line, sums):
    for j in range(line.size):
        sums[j] += line[j]


@compile_exact
def _gradient(g, y, sums, result):
    for j in range(g.size):
        result[j] = g[j] - vector_exp(y[j]) * sums[j]


@ahead_of_time("i8({t}[:, ::1], i8[::1], i8, {t}[::1])")
@compile_exact
def cross_entropy_rows(x, target, ignore_index, losses):
    """Each row's ``-log_softmax(x)[t]`` into ``losses`` (0 where ``t`` is ignored);
    returns the number of rows not ignored, or -1 at a target out of range. Shifted by
    the target's logit (NOTE [ Shifting by the target logit ] in
    ember_loss/cross_entropy.py), by the row max where that overflows."""
    counted = 0
    for i in range(x.shape[0]):
        t = target[i]
        if t == ignore_index:
            losses[i] = 0
            continue
        if t < 0 or t >= x.shape[1]:
            return -1
        row = x[i]
        picked = row[t]
        total = _wide_exp_sum(row, picked)
        if total == total and total != np.inf:
            losses[i] = math.log(total)
        else:  # a logit far above the target's, inf or nan
            top = row_max(row)
            losses[i] = math.log(_exp_sum(row, top)) - (picked - top)
        counted += 1
    return counted


# NOTE [ A confident row's loss, summed in float64 ]
# Shifted by the target's logit, a confident row's sum is 1 plus many small terms and
# its loss log(sum) is small (1e-3 for 1000 classes with the target 14 above the rest):
# a float32 sum's rounding, about 1e-7 of 1, is then 1e-4 of the loss. The NumPy kernel
# (a BLAS row sum) and torch keep 1e-5 there (tests/plugins/loss/
# test_cross_entropy_fast_path.py), so the forward sums the float32 exponentials in
# float64; the backward divides by the sum, where float32's relative rounding is enough.
@compile
def _wide_exp_sum(row, shift):
    total = 0.0  # float64 (NOTE above)
    for j in range(row.size):
        total += vector_exp(row[j] - shift)
    return total


@ahead_of_time("b1({t}[:, ::1], i8[::1], i8, {t}[::1], b1, {t}[:, ::1])")
@compile_exact
def cross_entropy_backward_rows(x, target, ignore_index, grads, mean, out):
    """``out[i] = scale_i * (softmax(x[i]) - onehot(t))`` for the rows not ignored (zeros
    for the others): ``scale_i`` is ``grads[i]``, or ``grads[0]`` (over the rows counted
    for the mean) when ``grads`` holds one value; False at a target out of range."""
    counted = 0
    for i in range(x.shape[0]):
        t = target[i]
        if t != ignore_index:
            if t < 0 or t >= x.shape[1]:
                return False
            counted += 1
    single = grads[0] / counted if mean and counted else grads[0]
    for i in range(x.shape[0]):
        t = target[i]
        result = out[i]
        if t == ignore_index:
            for j in range(result.size):
                result[j] = 0
            continue
        row = x[i]
        total = _exps_into(row, row[t], result)
        if not (total == total and total != np.inf):  # as the forward: shift by the max
            total = _exps_into(row, row_max(row), result)
        scale = grads[i] if grads.size > 1 else single
        factor = scale / total
        for j in range(result.size):
            result[j] = result[j] * factor
        result[t] -= scale
    return True


@compile
def _exps_into(row, shift, result):
    total = row.dtype.type(0)
    for j in range(row.size):
        e = vector_exp(row[j] - shift)
        result[j] = e
        total += e
    return total
