"""The compiled loop of ember_numba/cumulative_extreme.py (NOTE there): the running
maximum or minimum along the middle dim of an (outer, n, inner) array, with the index of
the last position that reached it.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``cummax_cummin_helper``) (v2.13).
"""

import numba

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit

compile = numba.njit(cache=True)  # comparisons and copies only: no flags change them


@compile
def _line(a, values, indices, o, i, largest):
    best, where = a[o, 0, i], 0
    for j in range(a.shape[1]):
        v = a[o, j, i]
        # a NaN wins and stays (later NaNs move the index); otherwise a value reaching
        # the extreme, a tie included, moves it. Selects, not a branch: 3x faster
        take = v != v or (best == best and (v >= best if largest else v <= best))
        best = v if take else best
        where = j if take else where
        values[o, j, i] = best
        indices[o, j, i] = where


@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], i8[:, :, ::1], b1)")
@jit
def running_extreme(a, values, indices, largest):
    outer, _, inner = a.shape
    for o in range(outer):
        for i in range(inner):
            if largest:  # a constant in each call below, so that LLVM folds the comparison
                _line(a, values, indices, o, i, True)
            else:
                _line(a, values, indices, o, i, False)
