"""The compiled loop of ember_numba/cumulative_extreme.py (NOTE there): the running
maximum or minimum along the middle dim of an (outer, n, inner) array, with the index of
the last position that reached it.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``cummax_cummin_helper``) (v2.13).
"""

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.jit import jit


@ahead_of_time("void({t}[:, :, ::1], {t}[:, :, ::1], i8[:, :, ::1], b1)")
@jit  # comparisons and copies only: the fast-math flags change nothing
def running_extreme(a, values, indices, largest):
    outer, n, inner = a.shape
    for o in range(outer):
        for i in range(inner):
            best, where = a[o, 0, i], 0
            for j in range(n):
                v = a[o, j, i]
                # a NaN wins and stays (later NaNs move the index); otherwise a value
                # reaching the extreme, a tie included, moves it
                if v != v or (best == best and (v >= best if largest else v <= best)):
                    best, where = v, j
                values[o, j, i] = best
                indices[o, j, i] = where
