"""``roi_align``: each box's region of a feature map, resampled to a fixed grid by
bilinear interpolation (Mask R-CNN's RoIAlign), and the ``RoIAlign`` module.

PyTorch counterpart: torchvision/ops/roi_align.py and
torchvision/csrc/ops/cpu/roi_align_kernel.cpp (torchvision 0.28).

NOTE [ RoIAlign's sampling grid ]
A roi ``(b, x1, y1, x2, y2)`` is scaled by ``spatial_scale`` into the feature map of
image ``b`` (with ``aligned=True``, shifted by -0.5 so that pixel centres sit on
integers; the original, ``aligned=False``, forces a malformed box to 1x1 instead). It
is split into ``pooled_height x pooled_width`` bins; each bin averages
``grid_h x grid_w`` bilinear samples at the centres of an even sub-grid, where the grid
is ``sampling_ratio`` per side or, for ``sampling_ratio <= 0``,
``ceil(roi size / pooled size)`` (adaptive). A sample outside ``[-1, size]`` reads 0;
one in ``[-1, 0]`` reads the border; at the last row or column the interpolation stops
at it. The weights depend on the box only, so they are computed once per box, per axis,
and shared by all channels.

The backward is its own op (``torchvision::_roi_align_backward``): it spreads each
output's gradient over the same four pixels with the same weights. It is linear in the
gradient, so its own derivative is ``roi_align`` again: ember gives second derivatives
where torchvision raises.
"""

import numpy as np

from ember import library, nn
from ember_vision.ops._utils import as_rois, check_roi_inputs, pair


def _roi_geometry(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, dtype):
    """``(start_h, start_w, bin_h, bin_w, grid_h, grid_w)`` for one roi, in the kernel's
    dtype (NOTE [ RoIAlign's sampling grid ])."""
    scalar = dtype.type
    offset = scalar(0.5) if aligned else scalar(0.0)
    start_w, start_h, end_w, end_h = (roi[k] * scalar(spatial_scale) - offset for k in (1, 2, 3, 4))
    roi_width, roi_height = end_w - start_w, end_h - start_h
    if not aligned:  # force malformed rois to 1x1
        roi_width, roi_height = max(roi_width, scalar(1)), max(roi_height, scalar(1))
    bin_h, bin_w = roi_height / scalar(pooled_height), roi_width / scalar(pooled_width)
    grid_h = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_height / scalar(pooled_height)))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_width / scalar(pooled_width)))
    return start_h, start_w, bin_h, bin_w, grid_h, grid_w


def _sample_points(start, bin_size, pooled, grid, dtype):
    """The sample coordinates along one axis, ``(pooled * grid,)``, bin by bin."""
    bins = np.arange(pooled, dtype=dtype)[:, None]
    steps = (np.arange(grid, dtype=dtype) + dtype.type(0.5))[None, :]
    return (start + bins * bin_size + steps * bin_size / dtype.type(grid)).reshape(-1)


def _axis_weights(coords, size):
    """Bilinear interpolation along one axis: ``(low, high, w_low, w_high, inside)``."""
    inside = (coords >= -1.0) & (coords <= size)  # NaN is outside
    c = np.where(inside & (coords > 0), coords, 0).astype(coords.dtype)
    low = c.astype(np.int64)
    at_edge = low >= size - 1
    low = np.where(at_edge, size - 1, low)
    high = np.where(at_edge, size - 1, low + 1)
    c = np.where(at_edge, low, c).astype(coords.dtype)
    w_high = c - low
    return low, high, 1 - w_high, w_high, inside


def _corner_weights(ys, xs, height, width):
    """The four corners' pixel indices and ``(len(ys), len(xs))`` weights of every sample."""
    y_low, y_high, hy, ly, y_in = _axis_weights(ys, height)
    x_low, x_high, hx, lx, x_in = _axis_weights(xs, width)
    inside = y_in[:, None] & x_in[None, :]
    corners = ((y_low, x_low, hy[:, None] * hx), (y_low, x_high, hy[:, None] * lx),
               (y_high, x_low, ly[:, None] * hx), (y_high, x_high, ly[:, None] * lx))
    return [(rows, cols, np.where(inside, w, 0).astype(ys.dtype)) for rows, cols, w in corners]


def roi_samples(roi, height, width, dtype, *, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """One roi's samples: the corners of ``_corner_weights`` and the grid per bin,
    ``(grid_h, grid_w)`` as computed (possibly 0 or negative: no samples)."""
    start_h, start_w, bin_h, bin_w, grid_h, grid_w = _roi_geometry(
        roi, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, dtype)
    ys = _sample_points(start_h, bin_h, pooled_height, max(grid_h, 0), dtype)
    xs = _sample_points(start_w, bin_w, pooled_width, max(grid_w, 0), dtype)
    return _corner_weights(ys, xs, height, width), grid_h, grid_w


def bin_sums(image, corners, pooled_height, pooled_width, grid_h, grid_w):
    """``(C, pooled_height, pooled_width)``: each bin's sum of the bilinear samples of
    ``image``, for the four corners of ``_corner_weights``."""
    samples = 0  # (C, ys, xs): the samples of all bins, bin by bin along each axis
    for rows, cols, weight in corners:
        samples = samples + weight * image[:, rows[:, None], cols[None, :]]
    bins = samples.reshape(image.shape[0], pooled_height, max(grid_h, 0),
                           pooled_width, max(grid_w, 0))
    return bins.sum(axis=(2, 4))


def spread_bin_sums(plane, corners, per_bin, grid_h, grid_w):
    """Add into ``plane`` (C, H, W) the adjoint of ``bin_sums``: each bin's value ``per_bin``
    (C, pooled_height, pooled_width) to every sample of the bin, by its weights."""
    per_sample = np.repeat(np.repeat(per_bin, max(grid_h, 0), axis=1), max(grid_w, 0), axis=2)  # (C, ys, xs)
    for rows, cols, w in corners:
        np.add.at(plane, (slice(None), rows[:, None], cols[None, :]), w * per_sample)


def _attrs(spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    return dict(spatial_scale=spatial_scale, pooled_height=pooled_height, pooled_width=pooled_width,
                sampling_ratio=sampling_ratio, aligned=aligned)


@library.custom_op("torchvision::roi_align", save="inputs")
def roi_align_op(xp, input, rois, *, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """``(K, C, pooled_height, pooled_width)``: the average of each bin's bilinear samples
    (NOTE [ RoIAlign's sampling grid ])."""
    check_roi_inputs(input, rois)
    x, boxes = np.asarray(input), np.asarray(rois)
    _, channels, height, width = x.shape
    attrs = _attrs(spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
    out = np.zeros((len(boxes), channels, pooled_height, pooled_width), dtype=x.dtype)
    if out.size == 0:
        return xp.asarray(out)
    for k, roi in enumerate(boxes):
        corners, grid_h, grid_w = roi_samples(roi, height, width, x.dtype, **attrs)
        count = x.dtype.type(max(grid_h * grid_w, 1))  # an empty grid gives 0, not 0 / 0
        out[k] = bin_sums(x[int(roi[0])], corners, pooled_height, pooled_width, grid_h, grid_w) / count
    return xp.asarray(out)


@library.custom_op("torchvision::_roi_align_backward", save="inputs")
def roi_align_backward_op(xp, grad, rois, *, spatial_scale, pooled_height, pooled_width, batch_size, channels,
                          height, width, sampling_ratio, aligned):
    """``(batch_size, channels, height, width)``: each output's gradient spread over the
    pixels its samples read, with their weights."""
    attrs = _attrs(spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
    return xp.asarray(backward(grad, rois, (batch_size, channels, height, width), attrs, spread_bin_sums))


def backward(grad, rois, shape, attrs, spread):
    """The input's gradient, ``shape`` (N, C, H, W): per roi, its samples' geometry, then
    ``spread(plane, corners, per_bin, grid_h, grid_w)`` (``spread_bin_sums``, or a
    compiled loop adding the same products in the same order) into its image."""
    if grad.dtype != rois.dtype:
        raise RuntimeError("grad should have the same type as rois")
    g, boxes = np.asarray(grad), np.asarray(rois)
    grad_input = np.zeros(shape, dtype=g.dtype)
    for k, roi in enumerate(boxes):
        corners, grid_h, grid_w = roi_samples(roi, shape[2], shape[3], g.dtype, **attrs)
        count = g.dtype.type(max(grid_h * grid_w, 1))
        spread(grad_input[int(roi[0])], corners, g[k] / count, grid_h, grid_w)
    return grad_input


def _roi_align_backward(ctx, grad):
    input, rois = ctx.saved_inputs
    batch_size, channels, height, width = input.shape
    grad_input = roi_align_backward_op(grad, rois, batch_size=batch_size, channels=channels, height=height,
                                       width=width, **ctx.attrs)
    return grad_input, None


def _roi_align_double_backward(ctx, grad):
    (_, rois) = ctx.saved_inputs
    attrs = {k: v for k, v in ctx.attrs.items() if k not in ("batch_size", "channels", "height", "width")}
    return roi_align_op(grad, rois, **attrs), None


library.register_autograd(roi_align_op, _roi_align_backward)
library.register_autograd(roi_align_backward_op, _roi_align_double_backward)


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """RoIAlign (Mask R-CNN) of ``input`` ``(N, C, H, W)`` over ``boxes``.

    Args:
        input: the feature maps.
        boxes: a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)``, or a list of
            ``(L_i, 4)`` xyxy tensors, one per image.
        output_size: ``(height, width)`` of each output, or an int.
        spatial_scale: maps box coordinates to the feature map (1/16 for stride 16).
        sampling_ratio: samples per bin and side; ``<= 0``: adaptive, ``ceil(roi / output)``.
        aligned: shift by -0.5 pixel so that sample points fall on pixel centres.

    Returns:
        ``(K, C, output_size[0], output_size[1])``.

    >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
    >>> roi_align(x, ember.tensor([[0., 0., 0., 2., 2.]]), 1, sampling_ratio=1)
    tensor([[[[5.]]]])
    """
    rois = as_rois(boxes)
    height, width = pair(output_size)
    return roi_align_op(input, rois, spatial_scale=float(spatial_scale), pooled_height=int(height),
                        pooled_width=int(width), sampling_ratio=int(sampling_ratio), aligned=bool(aligned))


class RoIAlign(nn.Module):
    """:func:`roi_align` as a module."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
