"""The compiled loop of ember_numba/index_reduce.py (NOTE there): slice ``source[:, t, :]``
combined into slice ``out[:, index[t], :]`` of an (outer, n, inner) array, t in order.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp
(``index_reduce_func_impl``) (v2.13).
"""

import numba

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit

compile = numba.njit(cache=True, error_model="numpy")  # no fast-math: NumPy's roundings, in order

SUM, PROD, AMAX, AMIN = 0, 1, 2, 3


@compile
def _combine(x, y, how):
    """NumPy's ``add``, ``multiply``, ``maximum`` or ``minimum``: a NaN on either side wins,
    and a tie (0 and -0) gives ``y``, as NumPy's does."""
    if how == SUM:
        return x + y
    if how == PROD:
        return x * y
    if x != x or y != y:
        return x + y  # NaN
    if how == AMAX:
        return x if x > y else y
    return x if x < y else y


@compile
def _slices(out, index, source, how):
    outer, _, inner = source.shape
    for t in range(index.shape[0]):
        row = index[t]
        for o in range(outer):
            for i in range(inner):
                out[o, row, i] = _combine(out[o, row, i], source[o, t, i], how)


@ahead_of_time("b1({t}[:, :, ::1], i8[::1], {t}[:, :, ::1], i8)")
@jit
def index_reduce(out, index, source, how):
    """False, with ``out`` untouched, if an index is out of range."""
    for t in range(index.shape[0]):
        if index[t] < 0 or index[t] >= out.shape[1]:
            return False
    if how == SUM:  # each reduction a loop of its own: a constant ``how`` folds the branches
        _slices(out, index, source, SUM)
    elif how == PROD:
        _slices(out, index, source, PROD)
    elif how == AMAX:
        _slices(out, index, source, AMAX)
    else:
        _slices(out, index, source, AMIN)
    return True
