"""The core's ``cummax`` and ``cummin`` (``aten::cummax``, ``aten::cummin``) as one compiled
pass along the dim: the cpu kernels ember-numba registers for them.

PyTorch counterpart: aten/src/ATen/native/ReduceOps.cpp (``cummax_helper_cpu``,
``cummin_helper_cpu``) (v2.13).

# NOTE [ A running extreme in one pass ]
# The NumPy kernel (ember/native/reduction/cumulative.py) makes three passes and a
# temporary each: ``maximum.accumulate`` for the values, a compare (and ``isnan``) for
# where the input holds the running extreme, and ``maximum.accumulate`` over positions
# for the indices; on (512, 512) along dim 1 that was about 6x torch's time. This loop
# walks each line once, as torch's helper does, keeping the extreme and its index: a
# NaN takes over and stays (each later NaN moves the index), any other value takes over
# when it reaches the extreme (so a tie moves the index forward). Only comparisons and
# copies: the values and indices are the NumPy kernel's, bit for bit. Contiguous float32
# and float64 arrays of at least one dim take the loop; others take the NumPy kernel.
"""

import math

import numpy as np

from ember.native.reduction import cumulative as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.cumulative_extreme_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's cummax and cummin on the cpu."""
    return [(core.CUMMAX, cummax), (core.CUMMIN, cummin)]


def _running(op, xp, a, dim, largest):
    if a.ndim == 0 or not compilable(a):
        return op.generic(xp, a, dim)
    lines = a.reshape(math.prod(a.shape[:dim]), a.shape[dim], -1)
    values, indices = np.empty_like(a), np.empty(a.shape, dtype=np.int64)
    loops.running_extreme(lines, values.reshape(lines.shape), indices.reshape(lines.shape), largest)
    return values, indices


def cummax(xp, a, dim):
    """``aten::cummax`` on the cpu: the running maximum along ``dim`` and where it was."""
    return _running(core.CUMMAX, xp, a, dim, True)


def cummin(xp, a, dim):
    """``aten::cummin`` on the cpu: the running minimum along ``dim`` and where it was."""
    return _running(core.CUMMIN, xp, a, dim, False)
