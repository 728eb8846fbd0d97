"""The core's grid-sampling taps (``aten::_grid_sampler_take_rows`` and its adjoint
``aten::_grid_sampler_add_rows``) as compiled loops: the cpu kernels ember-numba
registers for them.

PyTorch counterpart: aten/src/ATen/native/cpu/GridSamplerKernel.cpp (v2.13).

# NOTE [ Grid sampling's rows, compiled ]
# ember's grid_sample is a composition of ember ops whose taps are picks of whole
# channel rows (NOTE [ Grid sampling's taps as row picks ] in ember/native/grid_sampler.py).
# NumPy's fancy indexing of those rows and the ``bincount`` that adds their gradient
# back were about half of a bilinear forward's time on (8, 16, 64, 64). These loops do
# the same work without the index arrays NumPy builds: the pick copies each row, and the
# add sums each gradient row into a float64 total in the order ``bincount`` does (image,
# point, channel), then rounds once, so both give the NumPy kernels' bits. Contiguous
# float32 and float64 rows with int64 positions take the loops; anything else takes the
# NumPy kernels.
"""

import numpy as np

from ember.native import grid_sampler as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.grid_sampler_rows_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's grid-sampling row pick and row add on the cpu."""
    return [(core.TAKE_ROWS, take_rows), (core.ADD_ROWS, add_rows)]


def _positions(position, samples):
    return (position.dtype == np.int64 and position.ndim == 2 and position.flags.c_contiguous
            and position.shape[0] == samples)


def take_rows(xp, table, position):
    """``table[n, position[n, l], :]`` on the cpu."""
    if table.ndim != 3 or not compilable(table) or not _positions(position, table.shape[0]) or position.size == 0:
        return core.TAKE_ROWS.generic(xp, table, position)
    out = np.empty(position.shape + table.shape[2:], dtype=table.dtype)
    loops.take_rows(table, position, out)
    return out


def add_rows(xp, grad, position, rows):
    """Each ``grad[n, l, :]`` added into row ``position[n, l]`` of zeros ``(N, rows, C)``, on the cpu."""
    if grad.ndim != 3 or not compilable(grad) or not _positions(position, grad.shape[0]):
        return core.ADD_ROWS.generic(xp, grad, position, rows)
    total = np.zeros((grad.shape[0], rows, grad.shape[2]))
    loops.add_rows(grad, position, total)
    return total.astype(grad.dtype, copy=False)
