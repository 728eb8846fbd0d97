"""The backward of ``roi_align`` and ``roi_pool`` as compiled loops: the scatter of each
output's gradient onto the pixels it was read from. ember-vision's setup.py compiles them
ahead of time (ember_vision/ops/deform_conv2d_build.py) into the extension module
``ember_vision._roi_compiled``, which ember_vision/ops/roi_compiled.py loads.

PyTorch counterpart: torchvision/csrc/ops/cpu/roi_align_kernel.cpp
(``roi_align_backward_kernel_impl``, ``add``) and roi_pool_kernel.cpp
(``roi_pool_backward_kernel_impl``), compiled by torchvision's setup.py
``get_extensions`` (torchvision 0.28).

This module is imported by the build, before ember is installed: it imports numba and
NumPy, never ember.

# NOTE [ Compiled roi backwards with the reference's bits ]
# The references (roi_align.py, roi_pool.py) scatter with ``np.add.at``, which adds in the
# order of its flattened index arrays, in the gradient's dtype. The loops add the same
# products in the same order: roi_align's, per roi, corner by corner ((low, low), (low,
# high), (high, low), (high, high)), then channel, sample row, sample column, each
# product ``weight * (bin gradient / count)`` as the reference forms it; roi_pool's, per
# roi, channel and bin, the gradient onto its argmax. The per-roi sampling geometry (where
# the samples fall, their weights) stays the reference's own Python (``roi_samples``),
# computed once per roi; only the per-element work is compiled. So the gradients are the
# reference's bit for bit (tests/plugins/vision/test_roi_compiled.py).
"""

import numba

# the argument types the build compiles each loop for, {t} float32 and float64
ALIGN_SIGNATURE = "void({t}[:, :, ::1], i8[:, ::1], i8[:, ::1], {t}[:, :, ::1], {t}[:, :, ::1], i8, i8)"
POOL_SIGNATURE = "void({t}[:, :, ::1], i8[::1], i4[:, :, ::1], {t}[:, :, ::1])"


def roi_align_spread(plane, rows, cols, weights, per_bin, grid_h, grid_w):
    """Add into ``plane`` (C, H, W) one roi's gradient: ``per_bin`` (C, pooled_height,
    pooled_width), the bins' gradients already divided by the sample count, to every
    sample of the bin, at each corner ``q`` (rows ``rows[q]`` by columns ``cols[q]``) by
    ``weights[q]`` (samples along y, samples along x)."""
    channels = plane.shape[0]
    ys, xs = weights.shape[1], weights.shape[2]
    for q in range(4):
        for c in range(channels):
            for iy in range(ys):
                for ix in range(xs):
                    plane[c, rows[q, iy], cols[q, ix]] += weights[q, iy, ix] * per_bin[c, iy // grid_h, ix // grid_w]


def roi_pool_spread(grad, batch, argmax, grad_input):
    """Add into ``grad_input`` (N, C, H * W) each output's gradient ``grad`` (K, C, bins)
    at its ``argmax`` (K, C, bins; -1: none) in image ``batch[k]``."""
    rois, channels, bins = grad.shape
    for k in range(rois):
        for c in range(channels):
            for i in range(bins):
                at = argmax[k, c, i]
                if at >= 0:
                    grad_input[batch[k], c, at] += grad[k, c, i]


# what the build exports: (name, loop, signature with {t} for the dtype)
EXPORTS = (("roi_align_spread", roi_align_spread, ALIGN_SIGNATURE),
           ("roi_pool_spread", roi_pool_spread, POOL_SIGNATURE))

# the loops as numba's JIT compiles them (the tests compare them with the build and the reference)
jitted_align = numba.njit(roi_align_spread)
jitted_pool = numba.njit(roi_pool_spread)
