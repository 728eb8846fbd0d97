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
    ember_loss/cross_entropy_rows.py), by the row max where that overflows."""
    return _row_losses(x, target, losses[:1], False, ignore_index, losses)[0]  # losses[:1]: a weight never read


@compile_exact
def _row_losses(x, target, weight, weighted, ignore_index, losses):
    """Each row's ``-log_softmax(x)[t]`` (times ``w[t]`` if ``weighted``) into ``losses``,
    0 where ignored; returns the number of rows counted (-1 at a target out of range)
    and the sum of their ``w[t]`` in float64 (NOTE [ Class weights and spatial targets
    in the fused loops ])."""
    counted, denominator = 0, 0.0
    for i in range(x.shape[0]):
        t = target[i]
        if t == ignore_index:
            losses[i] = 0
            continue
        if t < 0 or t >= x.shape[1]:
            return -1, denominator
        loss = _target_loss(x[i], t)
        if weighted:
            loss = weight[t] * loss  # both of x's dtype
            denominator += weight[t]
        losses[i] = loss
        counted += 1
    return counted, denominator


@compile_exact
def _target_loss(row, t):
    """``-log_softmax(row)[t]``, shifted by the target's logit, by the row max where
    that overflows."""
    picked = row[t]
    total = _wide_exp_sum(row, picked)
    if total == total and total != np.inf:
        return row.dtype.type(math.log(total))
    top = row_max(row)  # a logit far above the target's, inf or nan
    return row.dtype.type(math.log(_exp_sum(row, top)) - (picked - top))


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
        _row_gradient(x[i], t, grads[i] if grads.size > 1 else single, result)
    return True


@compile_exact
def _row_gradient(row, t, scale, result):
    """``result = scale * (softmax(row) - onehot(t))``."""
    total = _exps_into(row, row[t], result)
    if not (total == total and total != np.inf):  # as the forward: shift by the max
        total = _exps_into(row, row_max(row), result)
    factor = scale / total
    for j in range(result.size):
        result[j] = result[j] * factor
    result[t] -= scale


@compile
def _exps_into(row, shift, result):
    total = row.dtype.type(0)
    for j in range(row.size):
        e = vector_exp(row[j] - shift)
        result[j] = e
        total += e
    return total


# NOTE [ Class weights and spatial targets in the fused loops ]
# A class weight scales each row's loss and gradient by ``w[t]`` and the mean divides by
# the sum of the ``w[t]`` counted, as torch's ``nll_loss`` frames do; the weighted row
# loops are the plain ones with that factor. Spatial targets, (N, C, d1, ...) logits
# with (N, d1, ...) indices, take the class dim as the column loops of log_softmax do
# (NOTE [ log_softmax along a dim that is not the last ]): per block of positions, each
# position's target logit, then a running sum of exponentials shifted by it across the
# classes (NOTE [ A confident position's loss ]), then each position's loss, the log of
# that sum; backward, the exponentials written into the gradient, scaled per position,
# less the scale at the target. A target out of range returns False before anything is reduced,
# and the kernel hands the call to the NumPy kernel, which raises torch's error. The
# weights counted are summed in float64: over a (4, 21, 13, 17) map's 884 positions a
# float32 running sum put the weighted mean 7.6e-6 off torch's (the NumPy kernel's
# pairwise sum: 1.4e-6).
@ahead_of_time("b1({t}[:, ::1], i8[::1], {t}[::1], i8, {t}[::1], {t}[::1])")
@compile_exact
def weighted_cross_entropy_rows(x, target, weight, ignore_index, losses, sums):
    """Each row's ``-w[t] * log_softmax(x)[t]`` into ``losses`` (0 where ignored), the
    sum of the ``w[t]`` counted into ``sums[0]``; False at a target out of range."""
    counted, sums[0] = _row_losses(x, target, weight, True, ignore_index, losses)
    return counted >= 0


@ahead_of_time("b1({t}[:, ::1], i8[::1], {t}[::1], i8, {t}[::1], b1, {t}[:, ::1])")
@compile_exact
def weighted_cross_entropy_backward_rows(x, target, weight, ignore_index, grads, mean, out):
    """``out[i] = w[t] * g_i * (softmax(x[i]) - onehot(t))`` (``g_i`` over the sum of the
    ``w[t]`` counted, for the mean), zeros where ignored; False at a target out of range."""
    denominator = 0.0  # float64 (NOTE [ Class weights and spatial targets in the fused loops ])
    for i in range(x.shape[0]):
        t = target[i]
        if t != ignore_index:
            if t < 0 or t >= x.shape[1]:
                return False
            denominator += weight[t]
    for i in range(x.shape[0]):
        t = target[i]
        result = out[i]
        if t == ignore_index:
            result[:] = 0
            continue
        w = weight[t]
        scale = _share(w, denominator) * grads[0] if mean else w * (grads[i] if grads.size > 1 else grads[0])
        _row_gradient(x[i], t, scale, result)
    return True


@ahead_of_time("b1({t}[:, :, ::1], i8[:, ::1], {t}[::1], b1, i8, {t}[:, ::1], {t}[::1], {t}[::1], {t}[::1], "
               "{t}[::1], i8)")
@compile_exact
def cross_entropy_columns(x, target, weight, weighted, ignore_index, losses, sums, shift, small, big, block):
    """``losses[o, k] = -w[t] * log_softmax(x[o, :, k])[t]`` with ``t = target[o, k]``
    (0 where ignored; ``w`` 1 unless ``weighted``), the sum of the ``w[t]`` counted into
    ``sums[0]``, ``block`` positions at a time; False at a target out of range. Each
    position is shifted by its target's logit and its exponentials summed in two parts
    (NOTE [ A confident position's loss ])."""
    classes, inner = x.shape[1], x.shape[2]
    denominator = 0.0  # float64 (NOTE [ Class weights and spatial targets in the fused loops ])
    for o in range(x.shape[0]):
        for start in range(0, inner, block):
            stop = min(start + block, inner)
            width = stop - start
            logits, below, above = shift[:width], small[:width], big[:width]
            if not _target_logits(x[o], target[o], ignore_index, start, logits):
                return False
            below[:] = 0
            above[:] = 0
            for c in range(classes):
                _add_exps_apart(x[o, c, start:stop], logits, below, above)
            for j in range(width):
                k = start + j
                t = target[o, k]
                if t == ignore_index:
                    losses[o, k] = 0
                    continue
                w = weight[t] if weighted else x.dtype.type(1)
                d = below[j] + (above[j] - 1)  # the sum less the target's own term, exp(0)
                if d == d and d != np.inf and logits[j] - logits[j] == 0:
                    loss = _log1p(d)
                else:  # a logit 88 above the target's (float32), inf or nan
                    loss = _column_loss(x[o], t, k)
                losses[o, k] = w * loss
                denominator += w
    sums[0] = denominator
    return True


@compile_exact
def _target_logits(lines, targets, ignore_index, start, logits):
    """Each position's target logit into ``logits`` (class 0's where ignored); False at a
    target out of range."""
    for j in range(logits.size):
        t = targets[start + j]
        if t == ignore_index:
            t = 0
        elif t < 0 or t >= lines.shape[0]:
            return False
        logits[j] = lines[t, start + j]
    return True


@compile_exact
def _column_loss(lines, t, k):
    """``-log_softmax(lines[:, k])[t]`` shifted by the column's max, one value at a time."""
    top = _column_max(lines, k)
    total = lines.dtype.type(0)
    for c in range(lines.shape[0]):
        total += vector_exp(lines[c, k] - top)
    return lines.dtype.type(math.log(total) - (lines[t, k] - top))


@compile_exact
def _column_max(lines, k):
    top = lines[0, k]
    for c in range(1, lines.shape[0]):
        v = lines[c, k]
        top = v if v > top else top
    return top


# NOTE [ A confident position's loss ]
# Shifted by its target's logit, a position's sum of exponentials is 1 (the target's own
# term, exp(0)) plus the others', and a confident position's loss is the log of a sum
# just above 1: summed in float32, the sum's rounding, 1e-7 of 1, is 1e-4 of a loss of
# 1e-3 (ember-loss's test keeps 1e-5; torch's float32 kernel is 2e-6 off there). The row
# loop sums in float64 (NOTE [ A confident row's loss, summed in float64 ]); across
# columns that halves the SIMD width ((8, 21, 32, 32) maps: 1.4 times torch's time
# instead of 1.2). So the terms below 1 and the others are summed apart, and the loss
# is ``log1p(below + (above - 1))``: for a confident position ``above`` is exactly 1 and
# the small terms keep their digits. The target shift also spares the pass that finds
# each column's max (forward 325 us against 247, shifted by the max); where a logit is
# far enough above the target's that its exponential overflows (or a logit is inf or
# nan), that position is done again, one value at a time, shifted by its max.
@compile_exact
def _log1p(d):
    """``log(1 + d)`` to a few ulps of ``d``'s dtype with one ``log``: the rounding of
    ``u = 1 + d`` cancels in ``log(u) * d / (u - 1)`` (Goldberg's formula; numba's
    ``math.log1p`` took 12 ns a call here, a third of the forward)."""
    u = 1 + d
    return d if u == 1 else math.log(u) * (d / (u - 1))


@compile_exact
def _add_exps_apart(line, shift, below, above):
    zero = line.dtype.type(0)
    for j in range(line.size):  # selects, not branches: SIMD code
        e = vector_exp(line[j] - shift[j])
        big = e >= 1
        above[j] += e if big else zero
        below[j] += zero if big else e


@ahead_of_time("b1({t}[:, :, ::1], i8[:, ::1], {t}[::1], b1, i8, {t}[:, ::1], b1, {t}[:, :, ::1], {t}[::1], "
               "{t}[::1], i8)")
@compile_exact
def cross_entropy_backward_columns(x, target, weight, weighted, ignore_index, grads, mean, out, shift, total,
                                   block):
    """``out[o, :, k] = s * (softmax(x[o, :, k]) - onehot(t))`` with ``s = w[t] * g``
    (``g`` over the sum of the ``w[t]`` counted, for the mean; ``grads[o, k]`` for
    one per position), zeros where ignored; False at a target out of range. Shifted by
    the target logits, as the forward (NOTE [ A confident position's loss ])."""
    classes, inner = x.shape[1], x.shape[2]
    in_range, denominator = _counted_weight(target, weight, weighted, ignore_index, classes)
    if not in_range:
        return False
    each = grads.size > 1
    for o in range(x.shape[0]):
        for start in range(0, inner, block):
            stop = min(start + block, inner)
            logits, factors = shift[:stop - start], total[:stop - start]
            _target_logits(x[o], target[o], ignore_index, start, logits)
            factors[:] = 0
            for c in range(classes):
                _exps_into_line(x[o, c, start:stop], logits, factors, out[o, c, start:stop])
            for j in range(stop - start):  # scale / sum into factors; logits NaN where redone below
                k = start + j
                scale = _position_scale(target[o, k], ignore_index, weight, weighted, grads, each, o, k, mean,
                                        denominator)
                if factors[j] != np.inf and logits[j] - logits[j] == 0:  # a NaN fails both
                    factors[j] = scale / factors[j]
                else:
                    factors[j], logits[j] = 0, np.nan
            for c in range(classes):
                _scale_line(out[o, c, start:stop], factors)
            for j in range(stop - start):
                k = start + j
                t = target[o, k]
                scale = _position_scale(t, ignore_index, weight, weighted, grads, each, o, k, mean, denominator)
                if logits[j] != logits[j]:
                    _column_gradient(x[o], out[o], -1 if t == ignore_index else t, k, scale)
                elif t != ignore_index:
                    out[o, t, k] -= scale
    return True


@compile_exact
def _counted_weight(target, weight, weighted, ignore_index, classes):
    """``(every target in range, the sum of the w[t] not ignored)`` over 2-d targets,
    the sum in float64 (NOTE [ Class weights and spatial targets in the fused loops ])."""
    one = weight.dtype.type(1)
    denominator = 0.0
    for o in range(target.shape[0]):
        for k in range(target.shape[1]):
            t = target[o, k]
            if t != ignore_index:
                if t < 0 or t >= classes:
                    return False, denominator
                denominator += weight[t] if weighted else one
    return True, denominator


@compile_exact
def _position_scale(t, ignore_index, weight, weighted, grads, each, o, k, mean, denominator):
    """A position's ``w[t] * g`` (over the denominator for the mean), 0 where ignored."""
    if t == ignore_index:
        return grads.dtype.type(0)
    w = weight[t] if weighted else grads.dtype.type(1)
    g = grads[o, k] if each else grads[0, 0]
    return grads.dtype.type(_share(w, denominator) * g if mean else w * g)


@compile_exact
def _column_gradient(lines, result, t, k, scale):
    """``result[:, k] = scale * (softmax(lines[:, k]) - onehot(t))`` shifted by the
    column's max, one value at a time (no target where ``t`` is -1)."""
    top = _column_max(lines, k)
    total = lines.dtype.type(0)
    for c in range(lines.shape[0]):
        e = vector_exp(lines[c, k] - top)
        result[c, k] = e
        total += e
    factor = scale / total
    for c in range(lines.shape[0]):
        result[c, k] = result[c, k] * factor
    if t >= 0:
        result[t, k] -= scale


@numba.njit(cache=True, error_model="numpy")
def _share(w, denominator):
    """``w / denominator``, the mean's factor of one position, in IEEE arithmetic: NaN
    (0 / 0) where the weights counted sum to 0, as in torch, where numba's default
    error model would raise ZeroDivisionError."""
    return w / denominator


@compile_exact
def _exps_into_line(line, high, sums, result):
    for j in range(line.size):
        e = vector_exp(line[j] - high[j])
        result[j] = e
        sums[j] += e


@compile_exact
def _scale_line(line, factors):
    for j in range(line.size):
        line[j] = line[j] * factors[j]
