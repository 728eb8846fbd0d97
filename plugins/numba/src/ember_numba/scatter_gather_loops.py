"""The compiled loops of ember_numba/scatter_gather.py (NOTE there): ``gather``'s reads
``out[o, j, i] = a[o, index[o, j, i], i]`` and ``scatter_add``'s adds
``out[o, index[o, j, i], i] += src[o, j, i]``, both in the index's order.

PyTorch counterpart: aten/src/ATen/native/cpu/ScatterGatherKernel.cpp
(``cpu_scatter_gather_base_kernel``) (v2.13).
"""

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("b1({t}[:, :, ::1], i8[:, :, ::1], {t}[:, :, ::1])")
@jit_exact  # copies only
def gather(a, index, out):
    """False, with ``out`` unfinished, at the first index out of range."""
    outer, n, inner = index.shape
    size = a.shape[1]
    for o in range(outer):
        for j in range(n):
            for i in range(inner):
                k = index[o, j, i]
                if k < 0 or k >= size:
                    return False
                out[o, j, i] = a[o, k, i]
    return True


@ahead_of_time("b1({t}[:, :, ::1], i8[:, :, ::1], {t}[:, :, ::1])")
@jit_exact  # no fast-math: each addition in np.add.at's order, so the same bits
def scatter_add(out, index, src):
    """False, with ``out`` partly added to, at the first index out of range."""
    outer, n, inner = index.shape
    size = out.shape[1]
    for o in range(outer):
        for j in range(n):
            for i in range(inner):
                k = index[o, j, i]
                if k < 0 or k >= size:
                    return False
                out[o, k, i] += src[o, j, i]
    return True
