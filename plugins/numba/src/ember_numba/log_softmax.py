"""Compiled CPU kernels for core's ``aten::log_softmax`` and
``aten::_log_softmax_backward_data``: one loop per row (or per block of columns, along
a dim that is not the last), with an exponential that LLVM vectorizes.

PyTorch counterpart: aten/src/ATen/native/cpu/SoftMaxKernel.cpp
(``vec_log_softmax_lastdim``, ``vec_log_softmax_backward_lastdim``, and
``_vec_log_softmax`` and its backward along other dims), registered through
aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``) (v2.13).

The ops are core's (ember/native/softmax.py); their generic kernels are NumPy code
(NOTE [ log_softmax over short rows ] there). These kernels serve contiguous float32 and
float64 arrays along any dim: rows along the last (the composite cross-entropy's
``(N, C)`` logits along dim 1), columns along any other (NOTE [ log_softmax along a dim
that is not the last ] in log_softmax_loops.py); they hand every other input to the
op's generic kernel: other dtypes and layouts, empty and 0-d arrays.

# NOTE [ One pass per row for log_softmax ]
# The NumPy kernel makes four to five whole-array passes forward (max, subtract, exp,
# sum, subtract) and four backward (exp, row sums, multiply, subtract), each a NumPy
# call with its own temporary; on (128, 10) logits the calls cost more than the
# arithmetic, on (32, 1000) the passes do. The loops visit each row while it is in
# the L1 cache: forward, its max, the sum of its exponentials and then its output
# (NOTE [ A row max that vectorizes ] in vector_exp.py); backward, the sum of its
# gradient and then ``g - exp(y) * sum``. The exponential is
# ember_numba/vector_exp.py's, which vectorizes where the C library's does not.
"""

import math

import numpy as np

from ember.native import softmax as core
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.log_softmax_loops")
BLOCK_BYTES = 256 * 1024


def overrides():
    """``[(op, cpu kernel)]``: core's log_softmax forward and backward ops on the cpu."""
    return [(core.LOG_SOFTMAX, log_softmax), (core.LOG_SOFTMAX_BACKWARD, log_softmax_backward)]


def _taken(a, dim):
    """Whether the loops take ``a`` along ``dim``: a contiguous float32/float64 array of
    at least one dim, not empty."""
    return a.ndim >= 1 and compilable(a)


def _lines(a, dim):
    """``a`` as (outer, size of ``dim``, inner)."""
    return a.reshape(-1, a.shape[dim], math.prod(a.shape[dim + 1:]))


def column_block(lines):
    """How many inner positions the column loops take at a time: a block whose lines
    along the reduced dim stay in the L2 cache, at least 64 (NOTE [ log_softmax along
    a dim that is not the last ] in log_softmax_loops.py)."""
    block = BLOCK_BYTES // (lines.shape[1] * lines.itemsize) // 16 * 16
    return min(max(block, 64), lines.shape[2])


def log_softmax(xp, a, dim):
    """``aten::log_softmax`` on the cpu: ``x - logsumexp(x)`` along ``dim``."""
    if not _taken(a, dim):
        return core.LOG_SOFTMAX.generic(xp, a, dim)
    out = np.empty_like(a)
    lines = _lines(a, dim)
    if lines.shape[2] == 1:
        loops.forward_rows(a.reshape(-1, a.shape[dim]), out.reshape(-1, a.shape[dim]))
    else:
        block = column_block(lines)
        loops.forward_columns(lines, out.reshape(lines.shape), np.empty(block, a.dtype), np.empty(block, a.dtype),
                              block)
    return out


def log_softmax_backward(xp, grad, output, dim):
    """``aten::_log_softmax_backward_data`` on the cpu: ``g - exp(y) * sum(g)`` along
    ``dim``."""
    if not (_taken(grad, dim) and compilable(grad, output) and grad.shape == output.shape):
        return core.LOG_SOFTMAX_BACKWARD.generic(xp, grad, output, dim)
    out = np.empty_like(grad)
    lines = _lines(grad, dim)
    if lines.shape[2] == 1:
        size = grad.shape[dim]
        loops.backward_rows(grad.reshape(-1, size), output.reshape(-1, size), out.reshape(-1, size))
    else:
        block = column_block(lines)
        loops.backward_columns(lines, output.reshape(lines.shape), out.reshape(lines.shape),
                               np.empty(block, grad.dtype), block)
    return out
