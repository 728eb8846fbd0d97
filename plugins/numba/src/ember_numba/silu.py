"""ember-activation's SiLU forward and backward (``activation::silu``,
``activation::silu_backward``) on float32, each one compiled loop with ember-numba's
vectorizable ``exp``: the cpu kernels ember-numba registers for them.

PyTorch counterpart: aten/src/ATen/native/cpu/Activation.cpp (``silu_kernel``: ``x /
(1 + exp(-x))`` on ``Vectorized<float>``, whose ``exp`` is a SIMD polynomial;
``silu_backward_kernel``) (v2.13).

# NOTE [ A SIMD exp for SiLU ]
# NumPy's float32 ``exp`` costs about 2 ns a value on this machine's AVX2 (no SIMD
# loop for it there), and SiLU is ``exp`` plus three more passes: twice torch's
# time, about 3.6 ms of a yolo_nano inference. numba's ``math.exp`` is a scalar libm
# call per value. The loop below is one pass that reads ``x`` once and writes the
# result once, with ember-numba's own float32 ``exp`` (``exp32``, NOTE [ Why not
# math.exp ] in ember_numba/vector_exp.py: Cody-Waite reduction, Cephes' polynomial,
# ``2**n`` built from its bits), which LLVM turns into eight-wide SIMD code. Its edges
# give torch's results: ``exp(-x)`` overflows to inf for x below -88.72 and
# ``x / inf`` is -0; a NaN stays NaN; -inf gives NaN (-inf / inf), +inf gives inf.
# The loop itself is compiled without fast-math (ember_numba/exact.py), so that no
# flag of the caller's reaches the division. Measured on 32K values of N(0, 9):
# 33 us against 43 for the loop's first version, which carried an exp of its own,
# and 61 for NumPy's ``exp`` alone; 99.5% of results equal torch's bit for bit, and
# the worst error against float64 is within torch's (test_silu.py).
# float64 (and other dtypes, empty or non-dense arrays) go to ember-activation's
# NumPy kernel, whose float64 ``exp`` is correctly rounded within 1 ulp.

# NOTE [ SiLU's gradient in one pass ]
# ``grad * s * (1 + x * (1 - s))`` with ``s = sigmoid(x)``: ember-activation's NumPy
# kernel makes it in six passes over two feature-map-sized buffers (exp, add,
# reciprocal, subtract, multiply, add, multiply, multiply), and a yolo_nano train
# step runs it on every activation. The loop reads ``grad`` and ``x`` once and writes
# the result once, with the forward's ``exp32``, and multiplies in torch's order
# (``(grad * s) * (...)``). At the edges it gives torch's results: 0 times a finite
# slope where ``exp(-x)`` overflows, NaN at NaN and at both infinities (``0 * inf``).
"""

import numpy as np

from ember_numba.ahead_of_time import Loops

loops = Loops("ember_numba.silu_loops")

F = np.float32


def overrides():
    """``[(op name, cpu kernel)]``: ember-activation's SiLU forward and backward, each kernel
    taking the one it replaces first (NOTE [ Kernels for another plugin's ops ] in
    ember/plugins/manager.py)."""
    return [("activation::silu", silu), ("activation::silu_backward", silu_backward)]


def silu(fallback, xp, x):
    """``activation::silu`` on the cpu: the compiled loop for dense float32 arrays, the
    NumPy kernel (``fallback``, the kernel it replaced) for everything else."""
    values = _dense(x)
    if values is None or x.dtype != F or x.size == 0:
        return fallback(xp, x)
    out = np.empty_like(x)  # the input's layout, as NumPy's ufuncs give
    if out.strides != x.strides:  # a size-1 axis strided differently: not worth a case
        return fallback(xp, x)
    loops.silu_loop(values, _dense(out))
    return out


def silu_backward(fallback, xp, grad, x):
    """``activation::silu_backward`` on the cpu: the compiled loop where ``grad`` and
    ``x`` are dense float32 arrays of one shape and one layout, the NumPy kernel
    (``fallback``, the kernel it replaced) for everything else."""
    values, grads = _dense(x), _dense(grad)
    if values is None or grads is None or x.dtype != F or grad.dtype != F or x.size == 0 \
            or grad.shape != x.shape or grad.strides != x.strides:
        return fallback(xp, grad, x)
    out = np.empty_like(x)
    if out.strides != x.strides:
        return fallback(xp, grad, x)
    loops.silu_backward_loop(grads, values, _dense(out))
    return out


def _dense(array):
    """``array``'s values in memory order as a flat view (C-contiguous, channels_last
    or any other dense layout), or None when it has gaps or overlaps."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    flat = np.ravel(array, order="K")
    return None if flat.flags.owndata else flat
