"""The compiled loops of ember_numba/pdist.py (NOTE there): every row pair's distance,
and each pair's gradient added to both of its rows.

PyTorch counterpart: aten/src/ATen/native/cpu/DistanceOpsKernel.cpp (``run_parallel_pdist``,
``run_backward_parallel_pdist``) (v2.13).
"""

import math

import numba
import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import FASTMATH, jit

compile = numba.njit(fastmath=set(FASTMATH), cache=True)  # NOTE [ Which fast-math flags ] in jit.py


@compile
def _two(x, i, j, p):
    """``||x[i] - x[j]||_2``, summed in the array's dtype (as the NumPy kernel and torch do)."""
    total = x.dtype.type(0)
    for k in range(x.shape[1]):
        d = x[i, k] - x[j, k]
        total += d * d
    return math.sqrt(total)


@compile
def _one(x, i, j, p):
    total = x.dtype.type(0)
    for k in range(x.shape[1]):
        total += abs(x[i, k] - x[j, k])
    return total


@compile
def _zero(x, i, j, p):
    total = x.dtype.type(0)
    for k in range(x.shape[1]):
        total += x[i, k] != x[j, k]
    return total


@compile
def _infinity(x, i, j, p):
    total = x.dtype.type(0)
    for k in range(x.shape[1]):
        # a max that keeps a NaN, as NumPy's amax does
        d = abs(x[i, k] - x[j, k])
        total = d if (d > total or d != d) and total == total else total
    return total


@compile
def _power(x, i, j, p):
    total = x.dtype.type(0)
    for k in range(x.shape[1]):
        total += abs(x[i, k] - x[j, k]) ** p
    return total ** (1.0 / p)


def _pairs(norm):
    """A loop ``out[k] = norm(x, i, j, p)`` over the pairs i < j, compiled per norm so that
    its reduction becomes SIMD code (a test of p per pair kept it scalar: 2.5x slower)."""
    @compile
    def loop(x, out, p):
        n = x.shape[0]
        k = 0
        for i in range(n - 1):
            for j in range(i + 1, n):
                out[k] = norm(x, i, j, p)
                k += 1
    return loop


_two_pairs, _one_pairs, _zero_pairs, _infinity_pairs, _power_pairs = map(_pairs, (_two, _one, _zero, _infinity,
                                                                                  _power))


@ahead_of_time("void({t}[:, ::1], {t}[::1], f8)")
@jit  # NOTE [ pdist, one pair at a time ] in pdist.py
def pdist_forward(x, out, p):
    if p == 2.0:
        _two_pairs(x, out, p)
    elif p == 1.0:
        _one_pairs(x, out, p)
    elif p == 0.0:
        _zero_pairs(x, out, p)
    elif math.isinf(p):
        _infinity_pairs(x, out, p)
    else:
        _power_pairs(x, out, p)


@compile
def _slope(diff, distance, p):
    """d distance / d x_i of one component ``diff = x_i[c] - x_j[c]`` for p other than 2
    (the NumPy kernel's ``_pair_slope``; 0 where the distance is 0)."""
    if distance == 0 or p == 0.0:
        return diff * 0
    if p == 1.0:
        return np.sign(diff)
    magnitude = abs(diff)
    if math.isinf(p):
        return np.sign(diff) * (magnitude == distance)
    if magnitude == 0:
        return diff * 0
    return np.sign(diff) * magnitude ** (p - 1) / distance ** (p - 1)


@compile
def _add_other(x, i, j, g, distance, p, row, out):
    """Pair (i, j)'s ``g * slope`` added to ``row`` (row i's buffer) and subtracted from
    row j, the slope from ``_slope``: any p, and a zero distance."""
    for c in range(x.shape[1]):
        scaled = g * _slope(x[i, c] - x[j, c], distance, p)
        row[c] += scaled
        out[j, c] -= scaled


@compile
def _two_backward(grad, x, distances, p, out, row):
    """The 2-norm's pairs: ``(g / distance) * diff``, one product per component where the
    NumPy kernel's ``g * (diff / distance)`` divides each (3x slower; a rounding apart)."""
    n, m = x.shape
    k = 0
    for i in range(n - 1):
        row[:] = 0
        for j in range(i + 1, n):
            g, distance = grad[k], distances[k]
            k += 1
            if distance == 0:
                _add_other(x, i, j, g, distance, p, row, out)
                continue
            factor = g / distance
            for c in range(m):
                scaled = factor * (x[i, c] - x[j, c])
                row[c] += scaled
                out[j, c] -= scaled
        for c in range(m):
            out[i, c] += row[c]


@compile
def _other_backward(grad, x, distances, p, out, row):
    n, m = x.shape
    k = 0
    for i in range(n - 1):
        row[:] = 0
        for j in range(i + 1, n):
            _add_other(x, i, j, grad[k], distances[k], p, row, out)
            k += 1
        for c in range(m):
            out[i, c] += row[c]


@ahead_of_time("void({t}[::1], {t}[:, ::1], {t}[::1], f8, {t}[:, ::1], {t}[::1])")
@jit
def pdist_backward(grad, x, distances, p, out, row):
    """Each pair's gradient added to row i (through a buffer, once per row) and subtracted
    from row j, in one fixed order."""
    if p == 2.0:
        _two_backward(grad, x, distances, p, out, row)
    else:
        _other_backward(grad, x, distances, p, out, row)
