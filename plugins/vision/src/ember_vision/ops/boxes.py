"""Box utilities: formats, areas, the IoU family, clipping, filtering, NMS.

PyTorch counterpart: torchvision/ops/boxes.py and _box_convert.py (torchvision 0.28).
ember leaves out the rotated formats (``xywhr``, ``cxcywhr``, ``xyxyxyxy``) and the
centre-format ``box_area_center``/``box_iou_center``.

Boxes are rows of four numbers. ``xyxy`` is ``(x1, y1, x2, y2)``, the corners, with
``x1 <= x2`` and ``y1 <= y2``; ``xywh`` is the top-left corner, width and height;
``cxcywh`` is the centre, width and height. The pairwise functions take ``(N, 4)`` and
``(M, 4)`` and return ``(N, M)``. They are compositions of ember ops, so they are
differentiable and trace into ONNX as plain arithmetic; ``nms`` chooses indices, which
has no gradient, and is the op ``torchvision::nms`` (nms.py).
"""

import math

import ember
from ember.jit import is_tracing
from ember_vision.ops._utils import upcast
from ember_vision.ops.nms import nms_op

_FORMATS = ("xyxy", "xywh", "cxcywh")


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes greedy non-maximum suppression keeps, by decreasing score.

    A box is discarded when its IoU with a kept, higher-scoring box is greater than
    ``iou_threshold``. Returns an int64 tensor.

    >>> nms(ember.tensor([[0., 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]]), ember.tensor([.9, .8, .7]), 0.5)
    tensor([0, 2])
    """
    return nms_op(boxes, scores, iou_threshold=float(iou_threshold))


# NOTE [ batched_nms: offsets or a loop ]
# NMS per category, in one call: torchvision shifts each category's boxes by
# ``category * (max coordinate + 1)``, so that boxes of different categories cannot
# overlap, and runs one NMS over all of them. Past 4000 numbers (1000 boxes) on CPU, a
# loop over the categories is faster, and it is taken unless the call is being traced
# (a trace must record the one form an exporter can write). The two can differ in the
# last bit of an IoU (the shifted coordinates round differently), which is why ember
# keeps torchvision's rule rather than choosing one.
def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category ``idxs``: boxes of different categories never suppress
    each other. Returns int64 indices into ``boxes``, by decreasing score.

    >>> boxes = ember.tensor([[0., 0, 10, 10], [1, 1, 11, 11]])
    >>> batched_nms(boxes, ember.tensor([.9, .8]), ember.tensor([0, 1]), 0.5)
    tensor([0, 1])
    """
    if boxes.numel() > 4000 and not is_tracing():
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return ember.empty((0,), dtype=ember.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + ember.tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
    keep_mask = ember.zeros_like(scores, dtype=ember.bool)
    for class_id in ember.unique(idxs):
        current = ember.where(idxs == class_id)[0]
        keep_mask[current[nms(boxes[current], scores[current], iou_threshold)]] = True
    keep = ember.where(keep_mask)[0]
    return keep[scores[keep].sort(descending=True)[1]]


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose width and height are both at least ``min_size``."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return ember.where((ws >= min_size) & (hs >= min_size))[0]


def clip_boxes_to_image(boxes, size):
    """Boxes ``(..., 4)`` (xyxy) clamped into an image of ``size = (height, width)``."""
    dim = boxes.dim()
    height, width = size
    if is_tracing():  # clamp with tensor bounds, which a trace records as inputs of max/min
        boxes_x = ember.minimum(ember.maximum(boxes[..., 0::2], ember.tensor(0, dtype=boxes.dtype)),
                                ember.tensor(width, dtype=boxes.dtype))
        boxes_y = ember.minimum(ember.maximum(boxes[..., 1::2], ember.tensor(0, dtype=boxes.dtype)),
                                ember.tensor(height, dtype=boxes.dtype))
    else:
        boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
        boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return ember.stack((boxes_x, boxes_y), dim=dim).reshape(boxes.shape)


def box_convert(boxes, in_fmt, out_fmt):
    """Boxes ``(..., 4)`` from ``in_fmt`` to ``out_fmt``, each one of ``"xyxy"``,
    ``"xywh"``, ``"cxcywh"`` (a conversion between the last two goes through xyxy).

    >>> box_convert(ember.tensor([[10.0, 20.0, 4.0, 6.0]]), "cxcywh", "xyxy")
    tensor([[ 8., 17., 12., 23.]])
    """
    if in_fmt not in _FORMATS or out_fmt not in _FORMATS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt == "xywh":
        boxes = _xywh_to_xyxy(boxes)
    elif in_fmt == "cxcywh":
        boxes = _cxcywh_to_xyxy(boxes)
    if out_fmt == "xywh":
        return _xyxy_to_xywh(boxes)
    if out_fmt == "cxcywh":
        return _xyxy_to_cxcywh(boxes)
    return boxes


def _xywh_to_xyxy(boxes):
    x, y, w, h = boxes.unbind(-1)
    return ember.stack([x, y, x + w, y + h], dim=-1)


def _cxcywh_to_xyxy(boxes):
    cx, cy, w, h = boxes.unbind(-1)
    return ember.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def _xyxy_to_xywh(boxes):
    x1, y1, x2, y2 = boxes.unbind(-1)
    return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)


def _xyxy_to_cxcywh(boxes):
    x1, y1, x2, y2 = boxes.unbind(-1)
    return ember.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)


def box_area(boxes):
    """Area ``(x2 - x1) * (y2 - y1)`` of each of ``(N, 4)`` xyxy boxes."""
    boxes = upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1, boxes2):
    """``(N, M)`` intersection and union areas."""
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = ember.maximum(boxes1[:, None, :2], boxes2[:, :2])  # top-left of the intersection, (N, M, 2)
    rb = ember.minimum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def _enclosing_wh(boxes1, boxes2):
    """``(N, M, 2)`` width and height of the smallest box holding both boxes."""
    lti = ember.minimum(boxes1[:, None, :2], boxes2[:, :2])
    rbi = ember.maximum(boxes1[:, None, 2:], boxes2[:, 2:])
    return upcast(rbi - lti).clamp(min=0)


def box_iou(boxes1, boxes2):
    """Pairwise intersection over union (Jaccard index): ``(N, 4), (M, 4) -> (N, M)``.
    Two empty boxes give 0 / 0 = nan, as in torchvision."""
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    """Pairwise GIoU, ``IoU - (C - union) / C`` with ``C`` the enclosing box's area; in [-1, 1]."""
    inter, union = _box_inter_union(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return inter / union - (areai - union) / areai


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    """Pairwise DIoU, ``IoU - d^2 / (c^2 + eps)``: ``d`` the distance of the centres, ``c``
    the enclosing box's diagonal."""
    diou, _ = _box_diou_iou(upcast(boxes1), upcast(boxes2), eps)
    return diou


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    """Pairwise CIoU, ``DIoU - alpha * v``: ``v`` compares the aspect ratios, and the weight
    ``alpha = v / (1 - IoU + v + eps)`` is computed without a graph, as torchvision does."""
    boxes1, boxes2 = upcast(boxes1), upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    h_pred = boxes1[:, None, 3] - boxes1[:, None, 1]
    w_gt = boxes2[:, 2] - boxes2[:, 0]
    h_gt = boxes2[:, 3] - boxes2[:, 1]
    v = (4 / math.pi ** 2) * ember.pow(ember.atan(w_pred / h_pred) - ember.atan(w_gt / h_gt), 2)
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def _box_diou_iou(boxes1, boxes2, eps):
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diagonal_squared = whi[:, :, 0] ** 2 + whi[:, :, 1] ** 2 + eps
    x_p = (boxes1[:, 0] + boxes1[:, 2]) / 2
    y_p = (boxes1[:, 1] + boxes1[:, 3]) / 2
    x_g = (boxes2[:, 0] + boxes2[:, 2]) / 2
    y_g = (boxes2[:, 1] + boxes2[:, 3]) / 2
    centres_squared = upcast(x_p[:, None] - x_g[None, :]) ** 2 + upcast(y_p[:, None] - y_g[None, :]) ** 2
    return iou - centres_squared / diagonal_squared, iou
