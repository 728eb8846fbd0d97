"""A float64 deformable convolution written from torch ops, the oracle of the
deform_conv2d tests (torchvision has no CPU build here): bilinear sampling by
``grid_sample`` (``align_corners=False``, the grid moved to torchvision's pixel
convention), then the convolution as columns times the weight (unfold's layout, matmul).

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d*.py (PyTorch counterpart:
torchvision/ops/deform_conv.py, torchvision 0.28).
"""

import torch
import torch.nn.functional as F


def sample(images, y, x):
    """``images`` (B, C, H, W) read at pixel coordinates ``y``, ``x`` (B, P, Q), bilinear,
    zero outside: (B, C, P, Q). torchvision reads pixel i at coordinate i; grid_sample with
    align_corners=False reads it at grid ``(2 * i + 1) / size - 1``."""
    height, width = images.shape[2:]
    grid = torch.stack([(2 * x + 1) / width - 1, (2 * y + 1) / height - 1], dim=-1)
    return F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), mask=None):
    """torchvision.ops.deform_conv2d's result, from torch ops (differentiable)."""
    n, channels, height, width = input.shape
    out_channels, per_group, kh, kw = weight.shape
    groups = channels // per_group
    offset_groups = offset.shape[1] // (2 * kh * kw)
    out_h, out_w = offset.shape[2:]
    taps, points = kh * kw, out_h * out_w
    rows = torch.arange(out_h, dtype=input.dtype)[None, :] * stride[0] - padding[0] \
        + torch.arange(kh, dtype=input.dtype)[:, None] * dilation[0]
    cols = torch.arange(out_w, dtype=input.dtype)[None, :] * stride[1] - padding[1] \
        + torch.arange(kw, dtype=input.dtype)[:, None] * dilation[1]
    rows = rows[:, None, :, None].expand(kh, kw, out_h, out_w).reshape(taps, points)
    cols = cols[None, :, None, :].expand(kh, kw, out_h, out_w).reshape(taps, points)
    pairs = offset.reshape(n, offset_groups, taps, 2, points)
    y = (rows + pairs[:, :, :, 0]).reshape(n * offset_groups, taps, points)
    x = (cols + pairs[:, :, :, 1]).reshape(n * offset_groups, taps, points)
    images = input.reshape(n * offset_groups, channels // offset_groups, height, width)
    samples = sample(images, y, x).reshape(n, offset_groups, channels // offset_groups, taps, points)
    if mask is not None:
        samples = samples * mask.reshape(n, offset_groups, 1, taps, points)
    columns = samples.reshape(n, groups, per_group * taps, points)
    out = weight.reshape(groups, out_channels // groups, per_group * taps) @ columns
    out = out.reshape(n, out_channels, out_h, out_w)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)
