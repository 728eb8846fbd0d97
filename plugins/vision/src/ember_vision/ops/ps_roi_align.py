"""``ps_roi_align``: position-sensitive RoIAlign (R-FCN), and the ``PSRoIAlign`` module.

PyTorch counterpart: torchvision/ops/ps_roi_align.py and
torchvision/csrc/ops/cpu/ps_roi_align_kernel.cpp (torchvision 0.28).

NOTE [ Position-sensitive bins ]
The input has ``C = C_out * pooled_height * pooled_width`` channels, one group per bin:
output channel ``c`` at bin ``(i, j)`` reads only input channel
``(c * pooled_height + i) * pooled_width + j`` (the op's second output, the channel
mapping, records it). The sampling is RoIAlign's with ``aligned=True`` (NOTE [ RoIAlign's
sampling grid ] in roi_align.py), except that a bin with no samples divides 0 by 0 and
outputs NaN, as torchvision's kernel does. The kernel below samples every input channel
at every bin and keeps the mapped ones: more work than torchvision's loop, the same
numbers; the backward scatters the gradient to the mapped channels and spreads it as
RoIAlign's backward does.
"""

import numpy as np

from ember import library, nn
from ember_vision.ops._utils import as_rois, backward_with_second_output, pair
from ember_vision.ops.roi_align import bin_sums, roi_samples, spread_bin_sums


def _check(input, rois, pooled_height, pooled_width):
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise RuntimeError("Tensor rois should have shape as Tensor[K, 5]")
    if input.dtype != rois.dtype:
        raise RuntimeError("input should have the same type as rois")
    if input.shape[1] % (pooled_height * pooled_width) != 0:
        raise RuntimeError("input channels must be a multiple of pooling height * pooling width")


def channel_mapping(channels_out, pooled_height, pooled_width):
    """``(C_out, pooled_height, pooled_width)`` int32: the input channel each output reads."""
    return np.arange(channels_out * pooled_height * pooled_width, dtype=np.int32).reshape(
        channels_out, pooled_height, pooled_width)


def setup(input, rois, pooled_height, pooled_width):
    """The checked ``(input, rois)`` as arrays, the channel mapping and zeros for the output."""
    _check(input, rois, pooled_height, pooled_width)
    x, boxes = np.asarray(input), np.asarray(rois)
    mapping = channel_mapping(x.shape[1] // (pooled_height * pooled_width), pooled_height, pooled_width)
    return x, boxes, mapping, np.zeros((len(boxes),) + mapping.shape, dtype=x.dtype)


def pick_mapped(per_channel, mapping):
    """``out[c, i, j] = per_channel[mapping[c, i, j], i, j]``."""
    _, ph, pw = mapping.shape
    return per_channel[mapping, np.arange(ph)[:, None], np.arange(pw)[None, :]]


def place_mapped(values, mapping, channels):
    """The adjoint of ``pick_mapped``: ``(channels, ph, pw)`` zeros with ``values`` at the mapped channels."""
    _, ph, pw = mapping.shape
    full = np.zeros((channels, ph, pw), dtype=values.dtype)
    full[mapping, np.arange(ph)[:, None], np.arange(pw)[None, :]] = values
    return full


def _sampling(roi, height, width, dtype, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    corners, grid_h, grid_w = roi_samples(roi, height, width, dtype, spatial_scale=spatial_scale,
                                          pooled_height=pooled_height, pooled_width=pooled_width,
                                          sampling_ratio=sampling_ratio, aligned=True)
    return corners, grid_h, grid_w, dtype.type(grid_h * grid_w)  # no max(., 1): 0 / 0 is NaN


@library.custom_op("torchvision::ps_roi_align", save="both", num_outputs=2)
def ps_roi_align_op(xp, input, rois, *, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    """``(output, channel_mapping)``, each ``(K, C_out, pooled_height, pooled_width)``
    (NOTE [ Position-sensitive bins ])."""
    x, boxes, mapping, out = setup(input, rois, pooled_height, pooled_width)
    _, channels, height, width = x.shape
    for k, roi in enumerate(boxes):
        corners, grid_h, grid_w, count = _sampling(roi, height, width, x.dtype, spatial_scale, pooled_height,
                                                   pooled_width, sampling_ratio)
        sums = bin_sums(x[int(roi[0])], corners, pooled_height, pooled_width, grid_h, grid_w)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = pick_mapped(sums, mapping) / count
    return xp.asarray(out), xp.asarray(np.broadcast_to(mapping, out.shape).copy())


@library.custom_op("torchvision::_ps_roi_align_backward")
def ps_roi_align_backward_op(xp, grad, rois, channel_mapping, *, spatial_scale, pooled_height, pooled_width,
                             sampling_ratio, batch_size, channels, height, width):
    """``(batch_size, channels, height, width)``: each output's gradient, spread over its
    mapped channel's samples."""
    if grad.dtype != rois.dtype:
        raise RuntimeError("grad should have the same type as rois")
    g, boxes, mapping = np.asarray(grad), np.asarray(rois), np.asarray(channel_mapping)
    grad_input = np.zeros((batch_size, channels, height, width), dtype=g.dtype)
    for k, roi in enumerate(boxes):
        corners, grid_h, grid_w, count = _sampling(roi, height, width, g.dtype, spatial_scale, pooled_height,
                                                   pooled_width, sampling_ratio)
        if grid_h <= 0 or grid_w <= 0:
            continue  # no samples, nothing to spread
        per_bin = place_mapped(g[k] / count, mapping[k], channels)
        spread_bin_sums(grad_input[int(roi[0])], corners, per_bin, grid_h, grid_w)
    return xp.asarray(grad_input)


library.register_autograd(ps_roi_align_op, backward_with_second_output(ps_roi_align_backward_op))


def ps_roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1):
    """Position-sensitive RoIAlign (R-FCN): ``(K, C / (oh * ow), oh, ow)``, each output
    channel's bin ``(i, j)`` read from its own input channel (NOTE [ Position-sensitive
    bins ]); the arguments are :func:`roi_align`'s.

    >>> x = ember.arange(16.).reshape(1, 4, 2, 2)
    >>> ps_roi_align(x, ember.tensor([[0., 0., 0., 2., 2.]]), 2, sampling_ratio=1)
    tensor([[[[ 0.,  5.],
              [10., 15.]]]])
    """
    rois = as_rois(boxes)
    height, width = pair(output_size)
    output, _ = ps_roi_align_op(input, rois, spatial_scale=float(spatial_scale), pooled_height=int(height),
                                pooled_width=int(width), sampling_ratio=int(sampling_ratio))
    return output


class PSRoIAlign(nn.Module):
    """:func:`ps_roi_align` as a module."""

    def __init__(self, output_size, spatial_scale, sampling_ratio):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input, rois):
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio})")
