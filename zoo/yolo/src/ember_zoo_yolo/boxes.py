"""Box utilities: format conversion, areas, the IoU family, NMS, IoU-family losses.

PyTorch counterpart: torchvision/ops/boxes.py, giou_loss.py, ciou_loss.py (v0.28):
same names, signatures and conventions, written for ember.

Boxes are rows of four coordinates. ``xyxy`` is ``(x1, y1, x2, y2)`` with
``x1 <= x2``, ``y1 <= y2``; ``xywh`` is the top-left corner, width and height
(COCO's format); ``cxcywh`` is the centre, width and height.

The pairwise functions (``box_iou`` and friends) take ``(N, 4)`` and ``(M, 4)`` and
return ``(N, M)``; the losses take two equal-shaped ``(..., 4)`` tensors and compare
them row by row. All of them are ember ops, so they are differentiable. ``nms`` and
``batched_nms`` choose indices, which has no gradient: they run ember-vision's greedy
kernel (``ember.ops.torchvision.nms``) on the detached values, in float64.

NOTE [ Degenerate boxes ]
``box_iou`` of two zero-area boxes is 0 / 0 = nan, as in torchvision: a caller that
can meet such boxes filters them first. The losses add ``eps`` to every denominator
instead, because a training step must not produce nan.
"""

import math

import numpy as np

import ember

_FORMATS = ("xyxy", "xywh", "cxcywh")
_REDUCTIONS = ("none", "mean", "sum")


def _check_boxes(boxes, name="boxes"):
    if not isinstance(boxes, ember.Tensor):
        raise TypeError(f"{name} must be an ember.Tensor, but got {type(boxes).__name__}")
    if boxes.dim() == 0 or boxes.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4), but got {tuple(boxes.shape)}")


def _float(boxes):
    """Integer boxes are promoted to float32 so that ratios are not truncated (torchvision's upcast)."""
    return boxes if boxes.dtype.is_floating_point else boxes.float()


def box_convert(boxes, in_fmt, out_fmt):
    """Convert ``(..., 4)`` boxes between ``"xyxy"``, ``"xywh"`` and ``"cxcywh"``.

    >>> box_convert(ember.tensor([[10.0, 20.0, 4.0, 6.0]]), "cxcywh", "xyxy")
    tensor([[ 8., 17., 12., 23.]])
    """
    if in_fmt not in _FORMATS or out_fmt not in _FORMATS:
        raise ValueError(f"Unsupported box format conversion {in_fmt!r} -> {out_fmt!r}; "
                         f"formats are {', '.join(_FORMATS)}")
    _check_boxes(boxes)
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        x1, y1, x2, y2 = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        x1, y1, x2, y2 = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    else:
        x1, y1, x2, y2 = a, b, c, d
    if out_fmt == "xyxy":
        return ember.stack([x1, y1, x2, y2], dim=-1)
    if out_fmt == "xywh":
        return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    return ember.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)


def box_area(boxes):
    """Area of each ``(..., 4)`` xyxy box: ``(x2 - x1) * (y2 - y1)``."""
    _check_boxes(boxes)
    boxes = _float(boxes)
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def _pairwise(boxes1, boxes2):
    """(N, 1, 4) and (1, M, 4) views, so that pairwise formulas broadcast to (N, M)."""
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    if boxes1.dim() != 2 or boxes2.dim() != 2:
        raise ValueError(f"pairwise box functions take (N, 4) and (M, 4), but got "
                         f"{tuple(boxes1.shape)} and {tuple(boxes2.shape)}")
    return _float(boxes1)[:, None, :], _float(boxes2)[None, :, :]


def _overlap(boxes1, boxes2):
    """Intersection and union areas of broadcastable xyxy boxes."""
    width = (ember.minimum(boxes1[..., 2], boxes2[..., 2]) - ember.maximum(boxes1[..., 0], boxes2[..., 0]))
    height = (ember.minimum(boxes1[..., 3], boxes2[..., 3]) - ember.maximum(boxes1[..., 1], boxes2[..., 1]))
    inter = width.clamp(min=0) * height.clamp(min=0)
    union = box_area(boxes1) + box_area(boxes2) - inter
    return inter, union


def _enclosing(boxes1, boxes2):
    """Corners of the smallest box enclosing both: (x1, y1, x2, y2)."""
    return (ember.minimum(boxes1[..., 0], boxes2[..., 0]), ember.minimum(boxes1[..., 1], boxes2[..., 1]),
            ember.maximum(boxes1[..., 2], boxes2[..., 2]), ember.maximum(boxes1[..., 3], boxes2[..., 3]))


def _centre_distance(boxes1, boxes2, eps):
    """Squared centre distance over the squared diagonal of the enclosing box (DIoU's penalty)."""
    x1, y1, x2, y2 = _enclosing(boxes1, boxes2)
    diagonal = (x2 - x1) ** 2 + (y2 - y1) ** 2 + eps
    dx = (boxes1[..., 0] + boxes1[..., 2] - boxes2[..., 0] - boxes2[..., 2]) / 2
    dy = (boxes1[..., 1] + boxes1[..., 3] - boxes2[..., 1] - boxes2[..., 3]) / 2
    return (dx ** 2 + dy ** 2) / diagonal


def _aspect_term(boxes1, boxes2):
    """CIoU's aspect-ratio consistency v = 4 / pi^2 (atan(w2 / h2) - atan(w1 / h1))^2."""
    w1, h1 = boxes1[..., 2] - boxes1[..., 0], boxes1[..., 3] - boxes1[..., 1]
    w2, h2 = boxes2[..., 2] - boxes2[..., 0], boxes2[..., 3] - boxes2[..., 1]
    return (4 / math.pi ** 2) * (ember.atan(w2 / h2) - ember.atan(w1 / h1)) ** 2


def box_iou(boxes1, boxes2):
    """Pairwise intersection over union of xyxy boxes: (N, 4), (M, 4) -> (N, M)."""
    boxes1, boxes2 = _pairwise(boxes1, boxes2)
    inter, union = _overlap(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    """Pairwise GIoU: IoU - (C - union) / C, C the enclosing box's area; in [-1, 1]."""
    boxes1, boxes2 = _pairwise(boxes1, boxes2)
    inter, union = _overlap(boxes1, boxes2)
    x1, y1, x2, y2 = _enclosing(boxes1, boxes2)
    enclosing = (x2 - x1) * (y2 - y1)
    return inter / union - (enclosing - union) / enclosing


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    """Pairwise DIoU: IoU - d^2 / c^2, d the centre distance, c the enclosing diagonal."""
    boxes1, boxes2 = _pairwise(boxes1, boxes2)
    inter, union = _overlap(boxes1, boxes2)
    return inter / union - _centre_distance(boxes1, boxes2, eps)


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    """Pairwise CIoU: DIoU - alpha v, v the aspect term, alpha = v / (1 - IoU + v + eps)."""
    boxes1, boxes2 = _pairwise(boxes1, boxes2)
    inter, union = _overlap(boxes1, boxes2)
    iou = inter / union
    v = _aspect_term(boxes1, boxes2)
    alpha = v / (1 - iou + v + eps)
    return iou - _centre_distance(boxes1, boxes2, eps) - alpha * v


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        # an empty mean is 0, not nan: a batch without positives still trains the classifier
        return loss.sum() * 0.0 if loss.numel() == 0 else loss.mean()
    return loss.sum()


def _check_loss_inputs(boxes1, boxes2, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid value for argument 'reduction': {reduction!r}; "
                         f"supported reductions are {', '.join(map(repr, _REDUCTIONS))}")
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    if tuple(boxes1.shape) != tuple(boxes2.shape):
        raise ValueError(f"box losses compare boxes row by row, so shapes must match, but got "
                         f"{tuple(boxes1.shape)} and {tuple(boxes2.shape)}")
    return _float(boxes1), _float(boxes2)


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """``1 - GIoU`` of matching rows of two ``(..., 4)`` xyxy tensors; in [0, 2]."""
    boxes1, boxes2 = _check_loss_inputs(boxes1, boxes2, reduction)
    inter, union = _overlap(boxes1, boxes2)
    x1, y1, x2, y2 = _enclosing(boxes1, boxes2)
    enclosing = (x2 - x1) * (y2 - y1)
    giou = inter / (union + eps) - (enclosing - union) / (enclosing + eps)
    return _reduce(1 - giou, reduction)


def complete_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """``1 - CIoU`` of matching rows of two ``(..., 4)`` xyxy tensors.

    alpha = v / (1 - IoU + v) is a weight, not a path for gradients: it is computed on
    detached values, as the CIoU paper's analysis of the gradient assumes.
    """
    boxes1, boxes2 = _check_loss_inputs(boxes1, boxes2, reduction)
    inter, union = _overlap(boxes1, boxes2)
    iou = inter / (union + eps)
    v = _aspect_term(boxes1, boxes2)
    with ember.no_grad():
        alpha = v / (1 - iou + v + eps)
    ciou = iou - _centre_distance(boxes1, boxes2, eps) - alpha * v
    return _reduce(1 - ciou, reduction)


def _check_nms_inputs(boxes, scores):
    _check_boxes(boxes)
    if boxes.dim() != 2:
        raise ValueError(f"boxes must have shape (N, 4), but got {tuple(boxes.shape)}")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError(f"scores must have shape ({boxes.shape[0]},), but got {tuple(scores.shape)}")


def _greedy_nms(boxes, scores, iou_threshold):
    """Greedy NMS in float64 by ember-vision's op ``torchvision::nms``, reached through
    ember's registry (plugins import nothing from each other)."""
    return ember.ops.torchvision.nms(boxes.detach().double(), scores.detach().double(),
                                     iou_threshold=float(iou_threshold))


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes kept by greedy non-maximum suppression, by decreasing score.

    A box is dropped when its IoU with a higher-scoring kept box is greater than
    ``iou_threshold``. Equal scores keep their input order (a stable sort).
    Returns an int64 tensor.
    """
    _check_nms_inputs(boxes, scores)
    return _greedy_nms(boxes, scores, iou_threshold)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category of ``idxs``: boxes of different categories never suppress each other.

    Returns int64 indices into ``boxes``, by decreasing score (ties: lower index first).
    """
    _check_nms_inputs(boxes, scores)
    if idxs.dim() != 1 or idxs.shape[0] != boxes.shape[0]:
        raise ValueError(f"idxs must have shape ({boxes.shape[0]},), but got {tuple(idxs.shape)}")
    idxs_np, scores_np = idxs.detach().numpy(), scores.detach().double().numpy()
    kept = []
    for category in np.unique(idxs_np):
        members = np.flatnonzero(idxs_np == category)
        rows = ember.from_numpy(members)
        kept.append(members[_greedy_nms(boxes[rows], scores[rows], iou_threshold).numpy()])
    keep = np.sort(np.concatenate(kept)) if kept else np.zeros(0, dtype=np.int64)
    keep = keep[np.argsort(-scores_np[keep], kind="stable")]
    return ember.from_numpy(keep.astype(np.int64))
