"""``MultiScaleRoIAlign``: RoIAlign over a feature pyramid, each box read from the level
that suits its size.

PyTorch counterpart: torchvision/ops/poolers.py (torchvision 0.28).

NOTE [ Which level a box reads ]
FPN's equation (1): a box of area ``w * h`` reads level
``k = floor(k0 + log2(sqrt(w * h) / s0) + eps)``, with ``k0 = canonical_level`` and
``s0 = canonical_scale``, clamped to the pyramid's levels: a 224x224 box reads level 4,
and each halving of the side goes one level finer. A level's number comes from its
scale against the (largest) image, ``2 ** round(log2(feature size / image size))``:
level ``-log2(scale)``, found once, at the first call.
"""

import math

import ember
from ember import nn
from ember_vision.ops.boxes import box_area
from ember_vision.ops.roi_align import roi_align


class LevelMapper:
    """The level index (from 0, the finest) each box reads (NOTE [ Which level a box reads ])."""

    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        s = ember.sqrt(ember.cat([box_area(boxlist) for boxlist in boxlists]))
        target_lvls = ember.floor(self.lvl0 + ember.log2(s / self.s0) + ember.tensor(self.eps, dtype=s.dtype))
        target_lvls = ember.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return target_lvls.to(ember.int64) - self.k_min


def initLevelMapper(k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):  # noqa: N802 (torchvision's name)
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _infer_scale(feature, original_size):
    """The power of two closest to the feature map's size over the image's (first axis)."""
    approx = float(feature.shape[-2]) / float(original_size[0])
    return 2.0 ** round(math.log2(approx))


def _setup_scales(features, image_shapes, canonical_scale, canonical_level):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    original_size = (max(s[0] for s in image_shapes), max(s[1] for s in image_shapes))
    scales = [_infer_scale(feature, original_size) for feature in features]
    lvl_min, lvl_max = -math.log2(scales[0]), -math.log2(scales[-1])
    return scales, initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                   canonical_level=canonical_level)


def _convert_to_roi_format(boxes):
    concat_boxes = ember.cat(list(boxes), dim=0)
    ids = ember.cat([ember.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return ember.cat([ids, concat_boxes], dim=1)


def _multiscale_roi_align(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    rois = _convert_to_roi_format(boxes)
    if len(x_filtered) == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    first = x_filtered[0]
    result = ember.zeros((len(rois), first.shape[1]) + tuple(output_size), dtype=first.dtype, device=first.device)
    for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales)):
        idx_in_level = ember.where(levels == level)[0]
        result[idx_in_level] = roi_align(per_level_feature, rois[idx_in_level], output_size=output_size,
                                         spatial_scale=scale, sampling_ratio=sampling_ratio).to(result.dtype)
    return result


class MultiScaleRoIAlign(nn.Module):
    """RoIAlign over the maps ``featmap_names`` of a pyramid (NOTE [ Which level a box reads ]).

    ``forward(x, boxes, image_shapes)``: ``x`` an ordered dict of feature maps, ``boxes``
    a list of ``(L_i, 4)`` xyxy boxes per image (in image pixels), ``image_shapes`` the
    images' ``(height, width)``; returns ``(sum L_i, C, *output_size)``.
    """

    def __init__(self, featmap_names, output_size, sampling_ratio, *, canonical_scale=224, canonical_level=4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x, boxes, image_shapes):
        x_filtered = [v for k, v in x.items() if k in self.featmap_names]
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes, self.canonical_scale,
                                                         self.canonical_level)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio, self.scales,
                                     self.map_levels)

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})")
