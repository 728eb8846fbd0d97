"""deform_conv2d's compiled cpu kernels: the reference's forward with its sampling step
(``deformable_im2col``), and the reference's backward with its scatter and its sums over
channels (``deformable_col2im``, ``deformable_col2im_coord``), run by the loops
ember-vision's build compiled ahead of time (``ember_vision._deform_conv2d_compiled``),
registered for "cpu" when that module is there and was built from today's loops.

PyTorch counterpart: torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp
(``TORCH_LIBRARY_IMPL(torchvision, CPU, m)``: the CPU kernel registered for the op)
(torchvision 0.28).

The loop gives the reference's columns bit for bit (NOTE [ A compiled im2col with the
reference's bits ] in deform_conv2d_loops.py) and the GEMM is the reference's, so the
outputs are the reference's too, run after run; the backward loops give the reference's
gradients bit for bit too (NOTE [ A compiled backward with the reference's bits ]), and
its GEMMs are the reference's own functions. Without a build (an install whose C
compiler or numba failed, a source checkout never built, or loops edited since the
build) the reference kernels serve the cpu and numba is never imported.
"""

import numpy as np

from ember import library
from ember_vision.ops.deform_conv2d_build import MODULE, load_built, source_digest
from ember_vision.ops.deform_conv2d_kernel import (
    backward,
    base_positions,
    deform_conv2d,
    deform_conv2d_backward,
    deformable_im2col,
    forward,
)

FLOATS = (np.float32, np.float64)


def load():
    """The built extension module, or None where it is missing or older than the loops."""
    return load_built(MODULE, source_digest(), "deform_conv2d_loops.py")


def columns_with(loop):
    """An ``im2col(xp, input, offset, mask, geometry)`` that runs ``loop(dtype)`` (the
    built export for that dtype, or numba's JIT of the same loop) for float32 and
    float64 NumPy arrays, and the reference for anything else."""
    def im2col(xp, input, offset, mask, geometry):
        if input.dtype not in FLOATS or xp is not np:
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


def backward_with(im2col_loop, col2im_loop, coord_loop):
    """A ``torchvision::_deform_conv2d_backward`` kernel: the reference's backward with its
    per-element steps run by the loops (each ``loop(dtype)``, as ``columns_with`` takes
    them), for float32 and float64 NumPy arrays; the reference for anything else."""
    im2col = columns_with(im2col_loop)

    def col2im(xp, masked, offset, rows, cols, input_shape, g):
        n, channels, height, width = input_shape
        total = np.zeros(n * channels * height * width)  # float64, as the reference's bincount adds
        col2im_loop(masked.dtype)(masked, offset, rows, cols, np.array([0, 1], masked.dtype), total, height, width,
                                  g.offset_groups, g.kh, g.kw)
        return total.astype(masked.dtype).reshape(input_shape)

    def col2im_coord(xp, grad_columns, masked, input, offset, rows, cols, g):
        n, dtype = input.shape[0], input.dtype
        grad_offset = np.zeros((n, g.offset_groups * g.kh * g.kw, 2, g.out_h * g.out_w), dtype)
        grad_mask = np.zeros((n, g.offset_groups * g.kh * g.kw, g.out_h * g.out_w), dtype)
        coord_loop(dtype)(grad_columns, masked, input, offset, rows, cols, np.array([0, 1], dtype), grad_offset,
                          grad_mask, g.offset_groups, g.kh, g.kw, g.use_mask)
        return grad_offset, grad_mask

    def compiled_deform_conv2d_backward(xp, grad, input, weight, offset, mask, bias, **attrs):
        if input.dtype not in FLOATS or xp is not np:
            return deform_conv2d_backward.generic(xp, grad, input, weight, offset, mask, bias, **attrs)
        return backward(np, grad, input, weight, offset, mask, bias, attrs, im2col, col2im, col2im_coord)
    return compiled_deform_conv2d_backward


def register():
    """Register the compiled kernels for "cpu" if the build is there; returns whether
    they were."""
    module = load()
    if module is None:
        return False

    def export(name):  # the build's exports of one loop, by dtype
        return lambda dtype: getattr(module, f"{name}_{dtype}")

    im2col = export("deformable_im2col")
    col2im, coord = export("deformable_col2im"), export("deformable_col2im_coord")
    library.register_kernel(deform_conv2d, "cpu", kernel_with(im2col))
    library.register_kernel(deform_conv2d_backward, "cpu",
                            backward_with(im2col, col2im, coord))
    return True
