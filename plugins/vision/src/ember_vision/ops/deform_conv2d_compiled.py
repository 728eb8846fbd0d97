"""deform_conv2d's compiled cpu kernel: the reference's forward with its sampling step
(``deformable_im2col``) run by the loop ember-vision's build compiled ahead of time
(``ember_vision._deform_conv2d_compiled``), registered for "cpu" when that module is
there and was built from today's loops.

PyTorch counterpart: torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp
(``TORCH_LIBRARY_IMPL(torchvision, CPU, m)``: the CPU kernel registered for the op)
(torchvision 0.28).

The loop gives the reference's columns bit for bit (NOTE [ A compiled im2col with the
reference's bits ] in deform_conv2d_loops.py) and the GEMM is the reference's, so the
outputs are the reference's too, run after run; the backward is the reference's on
every device. Without a build (an install whose C compiler or numba failed, a source
checkout never built, or loops edited since the build) the reference kernel serves the
cpu and numba is never imported.
"""

import importlib
import warnings

import numpy as np

from ember import library
from ember_vision.ops.deform_conv2d_build import MODULE, source_digest
from ember_vision.ops.deform_conv2d_kernel import base_positions, deform_conv2d, deformable_im2col, forward


def load():
    """The built extension module, or None where it is missing or older than the loops."""
    try:
        module = importlib.import_module(MODULE)
    except ImportError:
        return None
    if module.source_digest() != source_digest():
        warnings.warn(f"{MODULE} was built from another deform_conv2d_loops.py than today's: the reference kernel "
                      "serves deform_conv2d on the cpu; reinstall ember-vision to build it again", RuntimeWarning,
                      stacklevel=2)
        return None
    return module


def columns_with(loop):
    """An ``im2col(xp, input, offset, mask, geometry)`` that runs ``loop(dtype)`` (the
    built export for that dtype, or numba's JIT of the same loop) for float32 and
    float64 NumPy arrays, and the reference for anything else."""
    def im2col(xp, input, offset, mask, geometry):
        if input.dtype not in (np.float32, np.float64) or xp is not np:
            return deformable_im2col(xp, input, offset, mask, geometry)
        dtype = input.dtype
        n, channels = input.shape[:2]
        columns = np.empty((n, channels * geometry.kh * geometry.kw, geometry.out_h * geometry.out_w), dtype)
        rows, cols = base_positions(np, geometry, dtype)
        mask = mask if geometry.use_mask else np.zeros((1, 1, 1, 1), dtype)
        loop(dtype)(np.ascontiguousarray(input), np.ascontiguousarray(offset), np.ascontiguousarray(mask), rows, cols,
             np.array([0, 1], dtype), columns, geometry.offset_groups, geometry.kh, geometry.kw, geometry.use_mask)
        return columns
    return im2col


def kernel_with(loop):
    """A deform_conv2d kernel: the reference's forward with ``columns_with(loop)``."""
    im2col = columns_with(loop)

    def compiled_deform_conv2d(xp, input, weight, offset, mask, bias, **attrs):
        return forward(xp, input, weight, offset, mask, bias, attrs, im2col)
    return compiled_deform_conv2d


def register():
    """Register the compiled kernel for "cpu" if the build is there; returns whether
    it was."""
    module = load()
    if module is None:
        return False

    def export(dtype):  # the build's export for float32 or float64
        return getattr(module, f"deformable_im2col_{dtype}")

    library.register_kernel(deform_conv2d, "cpu", kernel_with(export))
    return True
