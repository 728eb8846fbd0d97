"""The compiled loop of ember_numba/silu.py (NOTE there).

PyTorch counterpart: aten/src/ATen/native/cpu/Activation.cpp (``silu_kernel``) (v2.13).
"""

import numpy as np

from ember_numba.ahead_of_time import ahead_of_time
from ember_numba.exact import jit_exact
from ember_numba.vector_exp import exp32

ONE = np.float32(1.0)


@ahead_of_time("void(float32[::1], float32[::1])")
@jit_exact  # no fast-math: NOTE in ember_numba/silu.py
def silu_loop(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v / (ONE + exp32(-v))


@ahead_of_time("void(float32[::1], float32[::1], float32[::1])")
@jit_exact  # no fast-math, as the forward's: NOTE in ember_numba/silu.py
def silu_backward_loop(grad, x, out):
    for i in range(x.size):
        v = x[i]
        s = ONE / (ONE + exp32(-v))
        out[i] = grad[i] * s * (ONE + v * (ONE - s))
