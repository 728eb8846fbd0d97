"""``ps_roi_pool``: position-sensitive RoIPool (R-FCN), and the ``PSRoIPool`` module.

PyTorch counterpart: torchvision/ops/ps_roi_pool.py and
torchvision/csrc/ops/cpu/ps_roi_pool_kernel.cpp (torchvision 0.28).

Each output channel's bin reads its own input channel (NOTE [ Position-sensitive bins ]
in ps_roi_align.py) and averages it over RoIPool's integer bins (NOTE [ RoIPool's
integer bins ] in roi_pool.py) with two differences torchvision's kernel has: the box
spans ``end - start`` pixels (at least 1), not ``end - start + 1``, and the bins are
clipped to ``[0, H - 1]`` and ``[0, W - 1]``, so the last row and column are never read.

ember differs in the backward: torchvision's CPU backward clips the bins to ``[0, H]``
and ``[0, W]``, so it is not its forward's derivative (it gives the last row and column
a gradient that the forward never read, and divides by a different bin area there).
ember's backward is the forward's exact adjoint, which ``gradcheck`` confirms.
"""

import numpy as np

from ember import library, nn
from ember_vision.ops._utils import as_rois, backward_with_second_output, pair
from ember_vision.ops.ps_roi_align import pick_mapped, place_mapped, setup
from ember_vision.ops.roi_pool import bin_edges, pixel_box


def _bins(roi, spatial_scale, pooled_height, pooled_width, height, width, dtype):
    start_h, start_w, end_h, end_w = pixel_box(roi, spatial_scale, dtype)
    rows = bin_edges(start_h, max(end_h - start_h, 1), pooled_height, height - 1, dtype)
    cols = bin_edges(start_w, max(end_w - start_w, 1), pooled_width, width - 1, dtype)
    return rows, cols


@library.custom_op("torchvision::ps_roi_pool", save="both", num_outputs=2)
def ps_roi_pool_op(xp, input, rois, *, spatial_scale, pooled_height, pooled_width):
    """``(output, channel_mapping)``, each ``(K, C_out, pooled_height, pooled_width)``:
    the mapped channel's mean over each bin (0 for an empty bin)."""
    x, boxes, mapping, out = setup(input, rois, pooled_height, pooled_width)
    _, channels, height, width = x.shape
    for k, roi in enumerate(boxes):
        rows, cols = _bins(roi, spatial_scale, pooled_height, pooled_width, height, width, x.dtype)
        means = np.zeros((channels, pooled_height, pooled_width), dtype=x.dtype)
        image = x[int(roi[0])]
        for ph, (h0, h1) in enumerate(rows):
            for pw, (w0, w1) in enumerate(cols):
                if h1 > h0 and w1 > w0:
                    means[:, ph, pw] = image[:, h0:h1, w0:w1].sum(axis=(1, 2)) / x.dtype.type((h1 - h0) * (w1 - w0))
        out[k] = pick_mapped(means, mapping)
    return xp.asarray(out), xp.asarray(np.broadcast_to(mapping, out.shape).copy())


@library.custom_op("torchvision::_ps_roi_pool_backward")
def ps_roi_pool_backward_op(xp, grad, rois, channel_mapping, *, spatial_scale, pooled_height, pooled_width,
                            batch_size, channels, height, width):
    """``(batch_size, channels, height, width)``: each output's gradient shared equally by
    the pixels of its bin in its mapped channel (the forward's adjoint)."""
    if grad.dtype != rois.dtype:
        raise RuntimeError("grad and rois must have the same dtype")
    g, boxes, mapping = np.asarray(grad), np.asarray(rois), np.asarray(channel_mapping)
    grad_input = np.zeros((batch_size, channels, height, width), dtype=g.dtype)
    for k, roi in enumerate(boxes):
        rows, cols = _bins(roi, spatial_scale, pooled_height, pooled_width, height, width, g.dtype)
        per_bin = place_mapped(g[k], mapping[k], channels)
        plane = grad_input[int(roi[0])]
        for ph, (h0, h1) in enumerate(rows):
            for pw, (w0, w1) in enumerate(cols):
                if h1 > h0 and w1 > w0:
                    area = g.dtype.type((h1 - h0) * (w1 - w0))
                    plane[:, h0:h1, w0:w1] += (per_bin[:, ph, pw] / area)[:, None, None]
    return xp.asarray(grad_input)


library.register_autograd(ps_roi_pool_op, backward_with_second_output(ps_roi_pool_backward_op))


def ps_roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """Position-sensitive RoIPool (R-FCN): ``(K, C / (oh * ow), oh, ow)``; the arguments
    are :func:`roi_pool`'s.

    >>> x = ember.arange(36.).reshape(1, 4, 3, 3)
    >>> ps_roi_pool(x, ember.tensor([[0., 0., 0., 2., 2.]]), 2)
    tensor([[[[ 0., 10.],
              [21., 31.]]]])
    """
    rois = as_rois(boxes)
    height, width = pair(output_size)
    output, _ = ps_roi_pool_op(input, rois, spatial_scale=float(spatial_scale), pooled_height=int(height),
                               pooled_width=int(width))
    return output


class PSRoIPool(nn.Module):
    """:func:`ps_roi_pool` as a module."""

    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
