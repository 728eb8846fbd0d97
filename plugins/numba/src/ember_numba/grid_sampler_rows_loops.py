"""The compiled loops of ember_numba/grid_sampler_rows.py (NOTE there): a grid sample's
taps picked as whole rows of channels, and their gradient added back.

PyTorch counterpart: aten/src/ATen/native/cpu/GridSamplerKernel.cpp (the gathers and
scatter-adds of ``ApplyGridSample``) (v2.13).
"""

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact


@ahead_of_time("void({t}[:, :, ::1], i8[:, ::1], {t}[:, :, ::1])")
@jit_exact  # copies only
def take_rows(table, position, out):
    samples, points, channels = out.shape
    for n in range(samples):
        for p in range(points):
            row = position[n, p]
            for c in range(channels):  # an explicit loop: a row slice's view cost more than its copy
                out[n, p, c] = table[n, row, c]


@ahead_of_time("void({t}[:, :, ::1], i8[:, ::1], f8[:, :, ::1])")
@jit_exact  # no fast-math: each sum in bincount's order, so the same bits
def add_rows(grad, position, total):
    samples, points, channels = grad.shape
    for n in range(samples):
        for p in range(points):
            row = position[n, p]
            for c in range(channels):
                total[n, row, c] += grad[n, p, c]
