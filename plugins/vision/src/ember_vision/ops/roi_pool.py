"""``roi_pool``: the maximum of each bin of each box (Fast R-CNN's RoIPool), and the
``RoIPool`` module.

PyTorch counterpart: torchvision/ops/roi_pool.py and
torchvision/csrc/ops/cpu/roi_pool_kernel.cpp (torchvision 0.28).

NOTE [ RoIPool's integer bins ]
Unlike RoIAlign, RoIPool snaps the box to whole pixels: its corners, scaled by
``spatial_scale``, are rounded half away from zero (C's ``round``), the box spans
``end - start + 1`` pixels (at least 1), and bin ``i`` of ``n`` covers pixels
``[floor(i * size / n), ceil((i + 1) * size / n))`` from the box's start, clipped to the
image. A bin left empty by the clipping outputs 0 and takes no gradient. The maximum is
C's running ``if (v > max)`` from ``-FLT_MAX``: the first maximum wins, NaN is never
taken, and a bin whose values are all ``<= -FLT_MAX`` outputs ``-FLT_MAX`` with no argmax
(-1). The argmax (the flat ``h * W + w`` in the box's image) is the op's second output,
which the backward op reads to route each gradient to its pixel.
"""

import numpy as np

from ember import library, nn
from ember_vision.ops._utils import as_rois, backward_with_second_output, pair

FLT_MAX = float(np.finfo(np.float32).max)


def round_half_away(value):
    """C's ``round``: halves go away from zero (NumPy's ``round`` goes to even)."""
    return int(np.sign(value) * np.floor(np.abs(value) + 0.5))


def pixel_box(roi, spatial_scale, dtype):
    """``(start_h, start_w, end_h, end_w)``: the scaled corners, rounded to pixels."""
    scale = dtype.type(spatial_scale)
    start_w, start_h, end_w, end_h = (round_half_away(roi[k] * scale) for k in (1, 2, 3, 4))
    return start_h, start_w, end_h, end_w


def bin_edges(start, size, pooled, limit, dtype):
    """``(begin, end)`` pixel ranges of ``pooled`` bins over ``size`` pixels from
    ``start``, clipped to ``[0, limit]`` (NOTE [ RoIPool's integer bins ])."""
    bin_size = dtype.type(size) / dtype.type(pooled)
    edges = []
    for i in range(pooled):
        begin = int(np.floor(dtype.type(i) * bin_size)) + start
        end = int(np.ceil(dtype.type(i + 1) * bin_size)) + start
        edges.append((min(max(begin, 0), limit), min(max(end, 0), limit)))
    return edges


def _check(input, rois):
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise RuntimeError("Tensor rois should have shape as Tensor[K, 5]")
    if input.dtype != rois.dtype:
        raise RuntimeError("input and rois must have the same dtype")


def _bin_max(region):
    """``(max, flat index)`` per channel of a ``(C, h, w)`` region, as C's running max."""
    values = region.reshape(region.shape[0], -1)
    values = np.where(np.isnan(values), -np.inf, values)
    best = values.argmax(axis=1)
    top = values[np.arange(len(values)), best]
    found = top > -FLT_MAX
    return np.where(found, top, -FLT_MAX), np.where(found, best, -1)


@library.custom_op("torchvision::roi_pool", save="both", num_outputs=2)
def roi_pool_op(xp, input, rois, *, spatial_scale, pooled_height, pooled_width):
    """``(output, argmax)``, each ``(K, C, pooled_height, pooled_width)``; argmax is int32
    (NOTE [ RoIPool's integer bins ])."""
    _check(input, rois)
    x, boxes = np.asarray(input), np.asarray(rois)
    _, channels, height, width = x.shape
    out = np.zeros((len(boxes), channels, pooled_height, pooled_width), dtype=x.dtype)
    argmax = np.zeros(out.shape, dtype=np.int32)
    if out.size == 0:
        return xp.asarray(out), xp.asarray(argmax)
    for k, roi in enumerate(boxes):
        start_h, start_w, end_h, end_w = pixel_box(roi, spatial_scale, x.dtype)
        rows = bin_edges(start_h, max(end_h - start_h + 1, 1), pooled_height, height, x.dtype)
        cols = bin_edges(start_w, max(end_w - start_w + 1, 1), pooled_width, width, x.dtype)
        image = x[int(roi[0])]
        for ph, (h0, h1) in enumerate(rows):
            for pw, (w0, w1) in enumerate(cols):
                if h1 <= h0 or w1 <= w0:
                    argmax[k, :, ph, pw] = -1  # an empty bin: 0, and no gradient
                    continue
                top, best = _bin_max(image[:, h0:h1, w0:w1])
                out[k, :, ph, pw] = top
                rows_in, cols_in = np.divmod(best, w1 - w0)
                argmax[k, :, ph, pw] = np.where(best >= 0, (rows_in + h0) * width + cols_in + w0, -1)
    return xp.asarray(out), xp.asarray(argmax)


@library.custom_op("torchvision::_roi_pool_backward")
def roi_pool_backward_op(xp, grad, rois, argmax, *, spatial_scale, pooled_height, pooled_width, batch_size,
                         channels, height, width):
    """``(batch_size, channels, height, width)``: each output's gradient added at its argmax."""
    return xp.asarray(backward(grad, rois, argmax, (batch_size, channels, height, width), spread_at_argmax))


def spread_at_argmax(grad_input, grad, boxes, index):
    """Add into ``grad_input`` (N, C, H * W) each output's gradient at its argmax, roi by
    roi, channel by channel, bin by bin."""
    channels = grad_input.shape[1]
    for k, roi in enumerate(boxes):
        plane = grad_input[int(roi[0])]
        picked = index[k].reshape(channels, -1)
        for c in range(channels):
            found = picked[c] >= 0
            np.add.at(plane[c], picked[c][found], grad[k, c].reshape(-1)[found])


def backward(grad, rois, argmax, shape, spread):
    """The input's gradient, ``shape`` (N, C, H, W), by ``spread(grad_input, grad, rois,
    argmax)`` (``spread_at_argmax``, or a compiled loop adding in the same order)."""
    if grad.dtype != rois.dtype:
        raise RuntimeError("grad and rois must have the same dtype")
    grad_input = np.zeros((shape[0], shape[1], shape[2] * shape[3]), dtype=grad.dtype)
    spread(grad_input, np.asarray(grad), np.asarray(rois), np.asarray(argmax))
    return grad_input.reshape(shape)


library.register_autograd(roi_pool_op, backward_with_second_output(roi_pool_backward_op))


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """RoIPool (Fast R-CNN): the maximum of each of ``output_size`` bins of each box.

    Args:
        input: ``(N, C, H, W)`` feature maps.
        boxes: a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)``, or a list of
            ``(L_i, 4)`` xyxy tensors, one per image.
        output_size: ``(height, width)`` of each output, or an int.
        spatial_scale: maps box coordinates to the feature map.

    Returns:
        ``(K, C, output_size[0], output_size[1])``.

    >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
    >>> roi_pool(x, ember.tensor([[0., 0., 0., 1., 1.]]), 1)
    tensor([[[[5.]]]])
    """
    rois = as_rois(boxes)
    height, width = pair(output_size)
    output, _ = roi_pool_op(input, rois, spatial_scale=float(spatial_scale), pooled_height=int(height),
                            pooled_width=int(width))
    return output


class RoIPool(nn.Module):
    """:func:`roi_pool` as a module."""

    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
