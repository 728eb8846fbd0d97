"""The core's ``gather`` (``aten::gather``) and its adjoint ``scatter_add``
(``aten::scatter_add``) as compiled loops: the cpu kernels ember-numba registers for
them. ``scatter_add`` is the backward of ``gather`` and of the ops that pick by index
(``cummax``, ``cummin``, ``max`` along a dim, ...).

PyTorch counterpart: aten/src/ATen/native/cpu/ScatterGatherKernel.cpp (``gather``,
``scatter_add_``) (v2.13).

# NOTE [ gather and scatter_add in the index's order ]
# The NumPy kernels (ember/native/indexing/indexing.py) build the full advanced index
# (an index array per dim), then read through it, or call ``np.add.at``, which walks it
# element by element through NumPy's generic machinery: on a (512, 512) gather along
# dim 1 about 5x torch's time, and its gradient's scatter_add as much again. These loops
# walk the index in the same (C) order: the gather copies, and the scatter adds in the
# array's dtype, so both give the NumPy kernels' bits. They take contiguous float32 and
# float64 arrays with an int64 index of ``input``'s size in every dim but ``dim`` (for
# scatter_add also of ``src``'s shape); anything else takes the NumPy kernel. The loops
# check each index as they read it and stop at one out of range; the kernel then drops
# its output and calls the NumPy kernel, which raises the error.
"""

import math

import numpy as np

from ember.native.indexing import indexing as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.scatter_gather_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's gather and scatter_add on the cpu."""
    return [(core.GATHER, gather), (core.SCATTER_ADD, scatter_add)]


def _index_taken(a, index, dim):
    """An int64 C-contiguous index of ``a``'s rank and ``a``'s size in every other dim."""
    if a.ndim == 0 or index.dtype != np.int64 or not index.flags.c_contiguous or index.ndim != a.ndim:
        return False
    return index.size > 0 and all(index.shape[d] == a.shape[d] for d in range(a.ndim) if d != dim)


def _lines(a, dim):
    """``a`` as (outer, size along ``dim``, inner)."""
    return a.reshape(math.prod(a.shape[:dim]), a.shape[dim], -1)


def gather(xp, a, index, dim):
    """``aten::gather`` on the cpu: ``a``'s values at ``index`` along ``dim``."""
    if not (compilable(a) and _index_taken(a, index, dim)):
        return core.GATHER.generic(xp, a, index, dim)
    out = np.empty(index.shape, dtype=a.dtype)
    if not loops.gather(_lines(a, dim), _lines(index, dim), _lines(out, dim)):
        return core.GATHER.generic(xp, a, index, dim)  # an index out of range: its error
    return out


def scatter_add(xp, a, index, src, dim):
    """``aten::scatter_add`` on the cpu: ``a`` with each ``src`` value added at its index along ``dim``."""
    if not (isinstance(src, np.ndarray) and compilable(a, src) and src.shape == index.shape
            and _index_taken(a, index, dim)):
        return core.SCATTER_ADD.generic(xp, a, index, src, dim)
    out = a.copy()
    if not loops.scatter_add(_lines(out, dim), _lines(index, dim), _lines(src, dim)):
        return core.SCATTER_ADD.generic(xp, a, index, src, dim)  # an index out of range: its error
    return out
