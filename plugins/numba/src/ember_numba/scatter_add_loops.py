"""The compiled loop of ember_numba/scatter_add.py (NOTE there): ``out[o, index[o, j, i], i]
+= src[o, j, i]`` in the index's order.

PyTorch counterpart: aten/src/ATen/native/cpu/ScatterGatherKernel.cpp (``cpu_scatter_gather_base_kernel``
with ``ReduceAdd``) (v2.13).
"""

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[:, :, ::1], i8[:, :, ::1], {t}[:, :, ::1])")
@jit_exact  # no fast-math: each addition in np.add.at's order, so the same bits
def scatter_add(out, index, src):
    outer, n, inner = index.shape
    for o in range(outer):
        for j in range(n):
            for i in range(inner):
                out[o, index[o, j, i], i] += src[o, j, i]
