"""The sampling of deform_conv2d (``deformable_im2col``) as one compiled loop: ember-vision's
setup.py compiles it ahead of time (ember_vision/ops/deform_conv2d_build.py) into the
extension module ``ember_vision._deform_conv2d_compiled``, which
ember_vision/ops/deform_conv2d_compiled.py loads.

PyTorch counterpart: torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp
(``deformable_im2col_kernel``, ``bilinear_interpolate``), compiled by torchvision's
setup.py ``get_extensions`` (torchvision 0.28).

This module is imported by the build, before ember is installed: it imports numba and
NumPy, never ember.

# NOTE [ A compiled im2col with the reference's bits ]
# The loop does per element what ``deformable_im2col`` in deform_conv2d_kernel.py does per
# array, in the same float type and the same order: the base position (given, already in
# the input's dtype) plus the offset, floor, the four weights ``hy * hx``, ``hy * lx``,
# ``ly * hx``, ``ly * lx``, their products with the neighbours summed left to right, 0 for
# a point a pixel or more outside, then times the mask (also for those zeros, as the
# reference's array product does: a negative mask makes them -0). numba compiles without
# fast-math (no reassociation, no fused multiply-add), and a float32 loop must never meet
# a Python int or float, which numba would widen to float64: the constants 0 and 1 come in
# as an array of the loop's dtype (``unit``). So the columns are the reference's bit for
# bit, and the GEMM after them is the reference's own call (tests/plugins/vision/
# test_deform_conv2d_compiled.py checks both, and that two runs agree).
"""

import numba
import numpy as np

# the argument types the build compiles the loop for, {t} float32 and float64
SIGNATURE = ("void({t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[::1], {t}[::1], {t}[::1], "
             "{t}[:, :, ::1], i8, i8, i8, b1)")


def deformable_im2col(input, offset, mask, rows, cols, unit, columns, offset_groups, kh, kw, use_mask):
    """Fill ``columns`` (N, C * kh * kw, out_h * out_w) from ``input`` (N, C, H, W), as
    deform_conv2d_kernel.deformable_im2col does (NOTE above). ``rows[i * out_h + oh]`` and
    ``cols[j * out_w + ow]`` are the base positions; ``unit`` is ``[0, 1]``."""
    n, channels, height, width = input.shape
    out_h, out_w = offset.shape[2], offset.shape[3]
    zero, one = unit[0], unit[1]
    per_group = channels // offset_groups
    for b in range(n):
        for c in range(channels):
            for k in range(kh * kw):  # tap (i, j), row-major
                i, j = k // kw, k % kw
                tap = (c // per_group) * kh * kw + k  # its offsets' and mask's channel
                for p in range(out_h * out_w):  # output position (oh, ow), row-major
                    oh, ow = p // out_w, p % out_w
                    y = rows[i * out_h + oh] + offset[b, 2 * tap, oh, ow]
                    x = cols[j * out_w + ow] + offset[b, 2 * tap + 1, oh, ow]
                    value = zero
                    if y > -1 and y < height and x > -1 and x < width:
                        value = _bilinear(input, b, c, y, x, height, width, zero, one)
                    if use_mask:
                        value = mask[b, tap, oh, ow] * value
                    columns[b, c * kh * kw + k, p] = value


@numba.njit  # called by the loop, compiled with it
def _bilinear(input, b, c, y, x, height, width, zero, one):
    """torchvision's ``bilinear_interpolate`` at a point inside (-1, height) x
    (-1, width)."""
    y_low, x_low = np.floor(y), np.floor(x)
    ly, lx = y - y_low, x - x_low
    hy, hx = one - ly, one - lx
    y0, x0 = int(y_low), int(x_low)
    v1 = input[b, c, y0, x0] if y0 >= 0 and x0 >= 0 else zero
    v2 = input[b, c, y0, x0 + 1] if y0 >= 0 and x0 + 1 < width else zero
    v3 = input[b, c, y0 + 1, x0] if y0 + 1 < height and x0 >= 0 else zero
    v4 = input[b, c, y0 + 1, x0 + 1] if y0 + 1 < height and x0 + 1 < width else zero
    return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4


# the loop as numba's JIT compiles it (the tests compare it with the build and the reference)
jitted = numba.njit(deformable_im2col)
