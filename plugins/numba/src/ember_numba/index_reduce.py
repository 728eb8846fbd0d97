"""The core's ``index_reduce`` (``aten::index_reduce``) as one compiled loop over the
index: the cpu kernel ember-numba registers for it.

PyTorch counterpart: aten/src/ATen/native/TensorAdvancedIndexing.cpp
(``index_reduce_func_impl``, a loop over the index combining whole slices) (v2.13).

# NOTE [ index_reduce, one slice at a time ]
# The NumPy kernel (ember/native/indexing/scatter_reduce.py) sorts the index into
# rounds, each target's k-th occurrence in round k, and combines each round's slices
# in one fancy-indexed call (NOTE [ Reducing writes ] there): an argsort, a mask per
# round, and a gather and a scatter of whole slices per round; on (4096, 64) with 16384
# source rows about 3x torch's time. This loop walks the index once in order and
# combines each source slice into its target slice in place, as torch does. Each
# target meets its values in the same order as in the rounds, by the same NumPy
# arithmetic (no fast-math; a NaN on either side of amax or amin wins, as in
# ``np.maximum``), so the values are the NumPy kernel's bit for bit; ``mean`` divides
# by the same counts afterwards. Contiguous float32 and float64 arrays with an int64
# index in range take the loop; anything else (and an index out of range, for its
# error) takes the NumPy kernel.
"""

import math

import numpy as np

from ember.native.indexing import scatter_reduce as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.index_reduce_loops")

_HOW = {"sum": 0, "mean": 0, "prod": 1, "amax": 2, "amin": 3}


def overrides():
    """``[(op, cpu kernel)]``: core's index_reduce on the cpu."""
    return [(core.INDEX_REDUCE, index_reduce)]


def _taken(a, index, source, dim):
    if a.ndim == 0 or not compilable(a, source) or a.ndim != source.ndim:
        return False
    if index.dtype != np.int64 or index.ndim != 1 or not index.flags.c_contiguous:
        return False
    return source.shape[dim] == index.size and all(source.shape[d] == a.shape[d] for d in range(a.ndim) if d != dim)


def index_reduce(xp, a, index, source, dim, reduce, include_self):
    """``aten::index_reduce`` on the cpu: ``source``'s slices combined into ``a``'s at ``index`` along ``dim``."""
    if reduce not in _HOW or not _taken(a, index, source, dim):
        return core.INDEX_REDUCE.generic(xp, a, index, source, dim, reduce, include_self)
    out = a.copy()
    outer = math.prod(a.shape[:dim])
    rows = out.reshape(outer, a.shape[dim], -1)
    if not include_self:
        rows[:, index[(index >= 0) & (index < a.shape[dim])]] = core._identity(xp, a.dtype, reduce)
    if not loops.index_reduce(rows, index, source.reshape(outer, index.size, -1), _HOW[reduce]):
        return core.INDEX_REDUCE.generic(xp, a, index, source, dim, reduce, include_self)  # its error
    if reduce == "mean":
        counts = np.bincount(index, minlength=a.shape[dim]) + (1 if include_self else 0)
        rows[...] = rows / np.maximum(counts, 1).reshape(-1, 1)
    return out
