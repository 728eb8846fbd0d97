"""The compiled loops of ember_numba/log_softmax.py, in a module of their own because
they import numba (through ember_numba/vector_exp.py) when they are defined: the
kernels import this module at their first call.

PyTorch counterpart: aten/src/ATen/native/cpu/SoftMaxKernel.cpp
(``_vec_log_softmax_lastdim``, ``_vec_log_softmax_backward``) (v2.13).
"""

import math

import numba

from ember_numba.jit import FASTMATH
from ember_numba.vector_exp import row_max, vector_exp

compile = numba.njit(fastmath=set(FASTMATH), cache=True)  # NOTE [ Which fast-math flags ] in jit.py
compile_exact = numba.njit(cache=True)  # no fast-math: NOTE below


# NOTE [ The output in torch's order ]
# Each output is ``(x - max) - log(sum)``, as torch computes it. Allowed to reassociate,
# LLVM computes ``x - (max + log(sum))`` instead, one subtraction per value fewer, and
# ``max + log(sum)`` rounds at the magnitude of the max: for float32 logits near 1e4 the
# outputs came out 2.5e-4 off (torch: 5e-7). So only the sum of exponentials is
# compiled with jit.py's flags (it needs them to vectorize); the loop that writes the
# outputs is compiled without any, and stays SIMD code, having no reduction.
@compile_exact
def forward_rows(x, out):
    """``out[i] = log_softmax(x[i])`` for each row ``i`` of the 2-d ``x``, in torch's
    order: ``(x - max) - log(sum(exp(x - max)))``."""
    for i in range(x.shape[0]):
        row, result = x[i], out[i]
        top = row_max(row)
        shift = math.log(_exp_sum(row, top))
        for j in range(row.size):
            result[j] = (row[j] - top) - shift


@compile
def _exp_sum(row, top):
    total = row.dtype.type(0)
    for j in range(row.size):
        total += vector_exp(row[j] - top)
    return total


@compile
def backward_rows(grad, output, out):
    """``out[i] = grad[i] - exp(output[i]) * sum(grad[i])`` for each row ``i``."""
    for i in range(grad.shape[0]):
        g, y, result = grad[i], output[i], out[i]
        total = g.dtype.type(0)
        for j in range(g.size):
            total += g[j]
        for j in range(g.size):
            result[j] = g[j] - vector_exp(y[j]) * total
