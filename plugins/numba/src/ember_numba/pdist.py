"""The core's ``pdist`` (``aten::_pdist_forward``) and its gradient
(``aten::_pdist_backward``) as compiled loops over row pairs: the cpu kernels
ember-numba registers for them.

PyTorch counterpart: aten/src/ATen/native/cpu/DistanceOpsKernel.cpp (``pdist_forward_kernel``,
``pdist_backward_kernel``) (v2.13).

# NOTE [ pdist, one pair at a time ]
# The NumPy kernel (ember/native/distance.py) takes one row at a time against all later
# rows: N - 1 NumPy calls, each with a (N - i, M) temporary of differences, so for
# (1024, 64) it spent about 10x torch's time in call overhead and temporaries. These
# loops visit each pair once, as torch's kernel does, and reduce its M components in a
# register, the same formula per p as the NumPy kernel (the 2-, 1-, 0- and inf-norms
# and the general power). The sums are allowed to reassociate (jit.py's flags), so a
# distance may differ from the NumPy kernel's by a rounding (NumPy sums pairwise); the
# backward adds each pair's gradient to row i in a buffer, then once into the output,
# and subtracts it from row j, in one fixed order; for the 2-norm it scales the
# difference by ``g / distance`` once per pair where the NumPy kernel divides each
# component (``g * (diff / distance)``), a rounding apart and 3x faster. Each loop is
# compiled per norm: a test of p inside the pair loop kept the sums scalar. Float32
# and float64 C-contiguous inputs take the loops; anything else takes the NumPy kernels.
"""

import numpy as np

from ember.native import distance as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.pdist_loops")


def overrides():
    """``[(op, cpu kernel)]``: core's pdist forward and backward on the cpu."""
    return [(core.PDIST, pdist), (core.PDIST_BACKWARD, pdist_backward)]


def pdist(xp, x, p):
    """``aten::_pdist_forward`` on the cpu: the distances of the upper triangle's pairs."""
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] == 0 or not compilable(x):
        return core.PDIST.generic(xp, x, p)
    n = x.shape[0]
    out = np.empty(n * (n - 1) // 2, dtype=x.dtype)
    loops.pdist_forward(x, out, float(p))
    return out


def pdist_backward(xp, grad, x, distances, p):
    """``aten::_pdist_backward`` on the cpu: each pair's gradient added to its two rows."""
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] == 0 or not compilable(grad, x, distances):
        return core.PDIST_BACKWARD.generic(xp, grad, x, distances, p)
    out = np.zeros_like(x)
    loops.pdist_backward(grad, x, distances, float(p), out, np.empty(x.shape[1], dtype=x.dtype))
    return out
