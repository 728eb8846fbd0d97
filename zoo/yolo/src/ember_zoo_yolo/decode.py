"""Anchor points, box decoding and post-processing (scores, confidence filter, class-wise NMS).

PyTorch counterpart: none in PyTorch; torchvision/models/detection/fcos.py's
``postprocess_detections`` and ``_utils.BoxLinearCoder`` (v0.28) play the same roles
for FCOS.

NOTE [ Anchor points and distances ]
An anchor is the centre of a feature-map cell,
``((i + 0.5) * stride, (j + 0.5) * stride)`` in input pixels, with the stride of its
level stored per anchor, so that all levels
concatenate into one axis of ``A`` anchors (row-major within a level, finest level
first: the order of head.py's outputs). The head predicts four raw numbers per anchor;
``softplus`` makes them positive distances (in strides) from the anchor to the box's
left, top, right and bottom sides, so ``xyxy = anchor -/+ distance * stride``. softplus
instead of exp: it grows linearly, so an early wild prediction cannot overflow the
box loss.
"""

import numpy as np

import ember
import ember.nn.functional as F
from ember_zoo_yolo.boxes import batched_nms


def make_anchors(image_size, strides):
    """``(points (A, 2) float32 pixels, strides (A, 1) float32)`` for images of
    ``image_size``: an int (square) or ``(height, width)``."""
    height, width = ((image_size, image_size) if isinstance(image_size, int)
                     else image_size)
    points, per_anchor = [], []
    for stride in strides:
        rows, cols = height // stride, width // stride
        xs, ys = np.meshgrid((np.arange(cols, dtype=np.float32) + 0.5) * stride,
                             (np.arange(rows, dtype=np.float32) + 0.5) * stride)
        points.append(np.stack([xs.ravel(), ys.ravel()], axis=1))
        per_anchor.append(np.full((rows * cols, 1), stride, dtype=np.float32))
    return (ember.from_numpy(np.concatenate(points)),
            ember.from_numpy(np.concatenate(per_anchor)))


def decode_boxes(raw_distances, points, strides):
    """``(B, A, 4)`` raw head outputs -> ``(B, A, 4)`` xyxy boxes in pixels
    (differentiable)."""
    distances = F.softplus(raw_distances) * strides
    return ember.cat([points - distances[..., :2], points + distances[..., 2:]], dim=-1)


def postprocess(logits, boxes, conf_threshold=0.25, iou_threshold=0.7,
                max_detections=300, image_size=None):
    """Per image: ``{"boxes": (k, 4), "scores": (k,), "labels": (k,)}`` after class-wise
    NMS.

    Every (anchor, class) pair whose sigmoid score passes ``conf_threshold`` is a
    candidate, so one anchor may propose two classes; NMS then runs per class and the
    ``max_detections`` best survivors are kept. Boxes are clipped to the image
    (``image_size``: an int for a square, or ``(height, width)``).
    """
    scores = ember.sigmoid(logits.detach()).numpy()
    boxes = boxes.detach().numpy()
    if image_size is not None:
        height, width = ((image_size, image_size) if isinstance(image_size, int)
                         else image_size)
        boxes = np.clip(boxes, 0,
                        np.array([width, height, width, height], dtype=boxes.dtype))
    results = []
    for image_scores, image_boxes in zip(scores, boxes):
        anchor, label = np.nonzero(image_scores > conf_threshold)
        candidate_boxes = image_boxes[anchor]
        candidate_scores = image_scores[anchor, label]
        keep = batched_nms(ember.from_numpy(candidate_boxes),
                           ember.from_numpy(candidate_scores),
                           ember.from_numpy(label.astype(np.int64)),
                           iou_threshold).numpy()[:max_detections]
        results.append({
            "boxes": ember.from_numpy(np.ascontiguousarray(candidate_boxes[keep])),
            "scores": ember.from_numpy(np.ascontiguousarray(candidate_scores[keep])),
            "labels": ember.from_numpy(label[keep].astype(np.int64))})
    return results
