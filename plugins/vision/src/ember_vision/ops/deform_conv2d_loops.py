"""The sampling of deform_conv2d (``deformable_im2col``) and its backward
(``deformable_col2im``, ``deformable_col2im_coord``) as compiled loops: ember-vision's
setup.py compiles them ahead of time (ember_vision/ops/deform_conv2d_build.py) into the
extension module ``ember_vision._deform_conv2d_compiled``, which
ember_vision/ops/deform_conv2d_compiled.py loads.

PyTorch counterpart: torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp
(``deformable_im2col_kernel``, ``bilinear_interpolate``, ``deformable_col2im_kernel``,
``deformable_col2im_coord_kernel``, ``get_coordinate_weight``), compiled by torchvision's
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

# NOTE [ A compiled backward with the reference's bits ]
# The backward loops follow deform_conv2d_backward (deform_conv2d_kernel.py)
# the same way. The input's gradient there is one ``bincount``: every product
# ``weight * column gradient`` (in the input's dtype) added in float64, corner
# by corner over the whole array, then rounded once; ``deformable_col2im``
# adds the same products into a float64 buffer in the same order (so it walks
# the array four times, once per corner). The offsets' and the mask's
# gradients are sums over the channels of an offset group, which NumPy's
# ``sum(axis=2)`` adds one channel after the other onto +0 (so a sum of -0s
# is +0); ``deformable_col2im_coord`` adds in that order. The neighbours are
# tested for being inside by their float coordinates, which agrees with the
# reference's int64 test for every coordinate, NaN and huge ones included,
# and never converts a float that does not fit an int.
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
                tap = (c // per_group) * kh * kw + k  # its offsets' and mask's channel
                for p in range(out_h * out_w):  # output position (oh, ow), row-major
                    oh, ow = p // out_w, p % out_w
                    y, x = _point(rows, cols, offset, b, tap, k, p, kw, out_h, out_w)
                    value = zero
                    if y > -1 and y < height and x > -1 and x < width:
                        value = _bilinear(input, b, c, y, x, height, width, zero, one)
                    if use_mask:
                        value = mask[b, tap, oh, ow] * value
                    columns[b, c * kh * kw + k, p] = value


@numba.njit  # called by the loops, compiled with them
def _point(rows, cols, offset, b, tap, k, p, kw, out_h, out_w):
    """``(y, x)``: where tap ``k`` (row-major (i, j)) of output position ``p`` (row-major
    (oh, ow)) reads, its base position plus the offsets of channel pair ``tap``."""
    i, j = k // kw, k % kw
    oh, ow = p // out_w, p % out_w
    return rows[i * out_h + oh] + offset[b, 2 * tap, oh, ow], cols[j * out_w + ow] + offset[b, 2 * tap + 1, oh, ow]


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


def deformable_col2im(grad_columns, offset, rows, cols, unit, total, height, width, offset_groups, kh, kw):
    """Add into ``total`` (float64, N * C * H * W, flat) the input's gradient:
    ``grad_columns`` (N, C, kh * kw, points), already times the mask, spread over the four
    neighbours of each sampled point by their bilinear weights, corner by corner (NOTE
    [ A compiled backward with the reference's bits ])."""
    n, channels = grad_columns.shape[0], grad_columns.shape[1]
    out_h, out_w = offset.shape[2], offset.shape[3]
    one = unit[1]
    per_group = channels // offset_groups
    for corner in range(4):  # (low, low), (low, high), (high, low), (high, high)
        dy, dx = corner // 2, corner % 2
        for b in range(n):
            for c in range(channels):
                for k in range(kh * kw):
                    tap = (c // per_group) * kh * kw + k
                    for p in range(out_h * out_w):
                        y, x = _point(rows, cols, offset, b, tap, k, p, kw, out_h, out_w)
                        if not (y > -1 and y < height and x > -1 and x < width):
                            continue
                        y_low, x_low = np.floor(y), np.floor(x)
                        cy, cx = y_low + dy, x_low + dx
                        if not (cy >= 0 and cy < height and cx >= 0 and cx < width):
                            continue
                        ly, lx = y - y_low, x - x_low
                        wy = ly if dy else one - ly
                        wx = lx if dx else one - lx
                        at = ((b * channels + c) * height + int(cy)) * width + int(cx)
                        total[at] += wy * wx * grad_columns[b, c, k, p]


def deformable_col2im_coord(grad_columns, masked, input, offset, rows, cols, unit, grad_offset, grad_mask,
                            offset_groups, kh, kw, use_mask):
    """Add into ``grad_offset`` (N, offset_groups * kh * kw, 2, points) and, with
    ``use_mask``, ``grad_mask`` (N, offset_groups * kh * kw, points), both zeros (NumPy's
    sum starts from +0, so that a sum of -0s is +0): per offset group,
    tap and output position, the sum over the group's channels of the column gradient
    (``masked``: times the mask) times the bilinear mix's derivative along y and x, and
    of the column gradient (``grad_columns``: not times the mask) times the sample."""
    n, channels, height, width = input.shape
    out_h, out_w = offset.shape[2], offset.shape[3]
    zero, one = unit[0], unit[1]
    per_group = channels // offset_groups
    for b in range(n):
        for g in range(offset_groups):
            for k in range(kh * kw):
                tap = g * kh * kw + k
                for p in range(out_h * out_w):
                    y, x = _point(rows, cols, offset, b, tap, k, p, kw, out_h, out_w)
                    sampled = y > -1 and y < height and x > -1 and x < width
                    y_low, x_low = np.floor(y), np.floor(x)
                    ly, lx = y - y_low, x - x_low
                    hy, hx = one - ly, one - lx
                    top, bottom = y_low >= 0 and y_low < height, y_low + 1 >= 0 and y_low + 1 < height
                    left, right = x_low >= 0 and x_low < width, x_low + 1 >= 0 and x_low + 1 < width
                    for c in range(g * per_group, (g + 1) * per_group):
                        v1 = input[b, c, int(y_low), int(x_low)] if top and left else zero
                        v2 = input[b, c, int(y_low), int(x_low) + 1] if top and right else zero
                        v3 = input[b, c, int(y_low) + 1, int(x_low)] if bottom and left else zero
                        v4 = input[b, c, int(y_low) + 1, int(x_low) + 1] if bottom and right else zero
                        along_y = masked[b, c, k, p] * (lx * (v4 - v2) + hx * (v3 - v1))
                        along_x = masked[b, c, k, p] * (ly * (v4 - v3) + hy * (v2 - v1))
                        grad_offset[b, tap, 0, p] += along_y
                        grad_offset[b, tap, 1, p] += along_x
                        if use_mask:
                            sample = zero
                            if sampled:
                                sample = hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4
                            grad_mask[b, tap, p] += grad_columns[b, c, k, p] * sample


# the argument types the build compiles each loop for, {t} float32 and float64
COL2IM_SIGNATURE = ("void({t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[::1], {t}[::1], {t}[::1], f8[::1], i8, i8, i8, "
                    "i8, i8)")
COORD_SIGNATURE = ("void({t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[:, :, :, ::1], {t}[::1], "
                   "{t}[::1], {t}[::1], {t}[:, :, :, ::1], {t}[:, :, ::1], i8, i8, i8, b1)")

# what the build exports: (name, loop, signature with {t} for the dtype)
EXPORTS = (("deformable_im2col", deformable_im2col, SIGNATURE),
           ("deformable_col2im", deformable_col2im, COL2IM_SIGNATURE),
           ("deformable_col2im_coord", deformable_col2im_coord, COORD_SIGNATURE))

# the loops as numba's JIT compiles them (the tests compare them with the build and the reference)
jitted = numba.njit(deformable_im2col)
jitted_col2im = numba.njit(deformable_col2im)
jitted_col2im_coord = numba.njit(deformable_col2im_coord)
