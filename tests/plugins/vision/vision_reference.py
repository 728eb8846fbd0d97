"""Float64 references for the RoI ops, written with torch ops (torchvision does not
import here): RoIAlign through grid_sample, RoIPool and PSRoIPool as loops over integer
bins, and random rois that reach past the image's borders."""

import math

import numpy as np
import torch
import torch.nn.functional as TF


def torch_roi_align(x, rois, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """Each roi's bins, each bin's samples read by grid_sample; differentiable in ``x``."""
    ph, pw = output_size
    _, _, height, width = x.shape
    outputs = []
    for roi in rois.tolist():
        b, x1, y1, x2, y2 = roi
        offset = 0.5 if aligned else 0.0
        sw, sh, ew, eh = (v * spatial_scale - offset for v in (x1, y1, x2, y2))
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw)
        if gh <= 0 or gw <= 0:
            outputs.append(x.new_zeros(x.shape[1], ph, pw))
            continue
        ys = torch.tensor([sh + p * rh / ph + (i + 0.5) * rh / ph / gh for p in range(ph) for i in range(gh)],
                          dtype=torch.float64)
        xs = torch.tensor([sw + p * rw / pw + (i + 0.5) * rw / pw / gw for p in range(pw) for i in range(gw)],
                          dtype=torch.float64)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        inside = ((gy >= -1) & (gy <= height) & (gx >= -1) & (gx <= width)).to(x.dtype)
        grid = torch.stack([_normalise(gx, width), _normalise(gy, height)], -1)[None].to(x.dtype)
        samples = TF.grid_sample(x[int(b)][None], grid, mode="bilinear", padding_mode="border",
                                 align_corners=True)[0] * inside
        outputs.append(samples.reshape(-1, ph, gh, pw, gw).mean(dim=(2, 4)))
    return torch.stack(outputs) if outputs else x.new_zeros(0, x.shape[1], ph, pw)


def _normalise(coords, size):
    """Pixel coordinates to grid_sample's [-1, 1] with align_corners=True (0 for size 1)."""
    return coords * 0 if size == 1 else coords * 2 / (size - 1) - 1


def random_rois(rng, k, batch, height, width, spread=1.3):
    """Rois that reach past every border of a ``height x width`` image (and some inside)."""
    lo = rng.uniform(-0.3 * width, spread * width, size=(k, 2)) * [1, height / width]
    size = rng.uniform(0.2, 0.8 * width, size=(k, 2)) * [1, height / width]
    return np.concatenate([rng.integers(0, batch, size=(k, 1)), lo, lo + size], axis=1)




def c_round(value):
    """C's ``round``: halves away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def integer_bins(start, size, pooled, limit):
    """Bin ``i`` covers ``[floor(i * size / pooled), ceil((i + 1) * size / pooled))`` from ``start``, clipped."""
    bins = []
    for i in range(pooled):
        lo = start + math.floor(i * size / pooled)
        hi = start + math.ceil((i + 1) * size / pooled)
        bins.append((min(max(lo, 0), limit), min(max(hi, 0), limit)))
    return bins


def torch_roi_pool(x, rois, output_size, spatial_scale=1.0):
    """Each bin's maximum (0 for an empty bin); differentiable in ``x``."""
    ph, pw = output_size
    outputs = []
    for b, *corners in rois.tolist():
        x1, y1, x2, y2 = (c_round(v * spatial_scale) for v in corners)
        rows = integer_bins(y1, max(y2 - y1 + 1, 1), ph, x.shape[2])
        cols = integer_bins(x1, max(x2 - x1 + 1, 1), pw, x.shape[3])
        image = x[int(b)]
        outputs.append(torch.stack([torch.stack([
            image[:, h0:h1, w0:w1].amax(dim=(1, 2)) if h1 > h0 and w1 > w0 else image.new_zeros(image.shape[0])
            for w0, w1 in cols], -1) for h0, h1 in rows], -2))
    return torch.stack(outputs) if outputs else x.new_zeros(0, x.shape[1], ph, pw)


def position_sensitive(per_channel, output_size):
    """``out[k, c, i, j] = per_channel[k, (c * oh + i) * ow + j, i, j]``."""
    ph, pw = output_size
    k, channels = per_channel.shape[:2]
    grouped = per_channel.reshape(k, channels // (ph * pw), ph, pw, ph, pw)
    return torch.stack([torch.stack([grouped[:, :, i, j, i, j] for j in range(pw)], -1) for i in range(ph)], -2)


def torch_ps_roi_pool(x, rois, output_size, spatial_scale=1.0):
    """Each mapped channel's mean over the bin, bins of ``end - start`` pixels clipped to size - 1."""
    ph, pw = output_size
    outputs = []
    for b, *corners in rois.tolist():
        x1, y1, x2, y2 = (c_round(v * spatial_scale) for v in corners)
        rows = integer_bins(y1, max(y2 - y1, 1), ph, x.shape[2] - 1)
        cols = integer_bins(x1, max(x2 - x1, 1), pw, x.shape[3] - 1)
        image = x[int(b)]
        outputs.append(torch.stack([torch.stack([
            image[:, h0:h1, w0:w1].mean(dim=(1, 2)) if h1 > h0 and w1 > w0 else image.new_zeros(image.shape[0])
            for w0, w1 in cols], -1) for h0, h1 in rows], -2))
    per_channel = torch.stack(outputs) if outputs else x.new_zeros(0, x.shape[1], ph, pw)
    return position_sensitive(per_channel, output_size)
