"""The core's ``scatter_add`` (``aten::scatter_add``) as one compiled loop: the cpu kernel
ember-numba registers for it. It is the backward of ``gather`` and of the ops that pick
by index (``cummax``, ``cummin``, ``max`` along a dim, ...).

PyTorch counterpart: aten/src/ATen/native/cpu/ScatterGatherKernel.cpp (``scatter_add_``) (v2.13).

# NOTE [ scatter_add in np.add.at's order ]
# The NumPy kernel (ember/native/indexing/indexing.py) builds the full advanced index
# (an index array per dim) and calls ``np.add.at``, which walks it element by element
# through NumPy's generic machinery: on cummax's (512, 512) gradient about 5x torch's
# time. This loop walks the index in the same (C) order and adds in the array's dtype,
# so it gives ``np.add.at``'s bits. It takes contiguous float32 and float64 arrays whose
# index has ``src``'s shape and ``input``'s size in every dim but ``dim``, with every index
# in range (checked first: the loop reads no bounds); others take the NumPy kernel.
"""

import math

import numpy as np

from ember.native.indexing import indexing as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.scatter_add_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's scatter_add on the cpu."""
    return [(core.SCATTER_ADD, scatter_add)]


def _taken(a, index, src, dim):
    if a.ndim == 0 or not isinstance(src, np.ndarray) or not compilable(a, src) or index.dtype != np.int64:
        return False
    if not index.flags.c_contiguous or index.shape != src.shape or index.ndim != a.ndim:
        return False
    if any(index.shape[d] != a.shape[d] for d in range(a.ndim) if d != dim):
        return False
    return index.min() >= 0 and index.max() < a.shape[dim]


def scatter_add(xp, a, index, src, dim):
    """``aten::scatter_add`` on the cpu: ``a`` with each ``src`` value added at its index along ``dim``."""
    if not _taken(a, index, src, dim):
        return core.SCATTER_ADD.generic(xp, a, index, src, dim)
    out = a.copy()
    outer = math.prod(a.shape[:dim])
    lines = (outer, index.shape[dim], -1)
    loops.scatter_add(out.reshape(outer, a.shape[dim], -1), index.reshape(lines), src.reshape(lines))
    return out
