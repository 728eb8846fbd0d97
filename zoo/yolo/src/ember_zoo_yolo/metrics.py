"""Mean average precision for box detection, the COCO way (mAP@0.5, @0.75, @0.5:0.95).

PyTorch counterpart: none in PyTorch; torchmetrics' detection/mean_ap.py and
pycocotools' cocoeval.py (COCOeval, bbox, area range "all", 100 detections per image
and class) are the references. This is ember's own NumPy implementation of the
algorithm COCOeval documents; tests/zoo/yolo/test_metrics.py checks it against
pycocotools to 1e-6.

NOTE [ COCO's average precision ]
For each class, each image's detections are sorted by score (stable) and cut to
``max_detections``; each is matched, in that order, to the unmatched ground-truth box
of highest IoU, provided that IoU >= t (ties go to the later box, as in COCOeval).
All images' detections are then ranked by score together; cumulative true and false
positives give precision and recall; precision is made non-increasing from the right
and read at 101 recall points 0, 0.01, ..., 1 (a recall point beyond the last reached
recall reads 0). AP is the mean of those 101 values, mAP the mean over classes that
have ground truth (classes without any are left out, COCO's -1) and, for @0.5:0.95,
over the ten thresholds 0.50, 0.55, ..., 0.95. Everything is float64, since float32
thresholds move matches that sit exactly on a threshold.
"""

import numpy as np

import ember

# the same expressions COCOeval uses, so that the thresholds are the same float64 numbers
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(0.0, 1.0, int(np.round((1.0 - 0.0) / 0.01)) + 1, endpoint=True)


def _numpy(value, dtype):
    if isinstance(value, ember.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=dtype)


def _pairwise_iou(boxes1, boxes2):
    """(D, G) IoU of xyxy boxes in float64."""
    width = np.minimum(boxes1[:, None, 2], boxes2[None, :, 2]) - np.maximum(boxes1[:, None, 0], boxes2[None, :, 0])
    height = np.minimum(boxes1[:, None, 3], boxes2[None, :, 3]) - np.maximum(boxes1[:, None, 1], boxes2[None, :, 1])
    inter = np.clip(width, 0, None) * np.clip(height, 0, None)
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    union = area1[:, None] + area2[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def _match(ious, thresholds):
    """(T, D) bool: detection d (score order) is a true positive at threshold t."""
    num_dt, num_gt = ious.shape
    matched = np.zeros((len(thresholds), num_dt), dtype=bool)
    for t, threshold in enumerate(thresholds):
        taken = np.zeros(num_gt, dtype=bool)
        for d in range(num_dt):
            candidates = np.where(taken, -1.0, ious[d])
            best = candidates.max(initial=-1.0)
            if best < min(threshold, 1 - 1e-10):
                continue
            # the last of equal IoUs
            g = num_gt - 1 - int(np.argmax(candidates[::-1] == best))
            taken[g] = True
            matched[t, d] = True
    return matched


def _precision_at_recalls(matched, num_gt):
    """(T, R) interpolated precision from ranked true-positive flags (T, D)."""
    tp = np.cumsum(matched, axis=1, dtype=np.float64)
    fp = np.cumsum(~matched, axis=1, dtype=np.float64)
    result = np.zeros((matched.shape[0], len(RECALL_THRESHOLDS)))
    for t in range(matched.shape[0]):
        recall = tp[t] / num_gt
        precision = tp[t] / (tp[t] + fp[t] + np.spacing(1))
        # non-increasing from the right
        precision = np.maximum.accumulate(precision[::-1])[::-1]
        where = np.searchsorted(recall, RECALL_THRESHOLDS, side="left")
        inside = where < len(precision)
        result[t, inside] = precision[where[inside]]
    return result


def _class_precision(detections, targets, label, max_detections, thresholds):
    """(T, R) precision for one class, or None when the class has no ground truth."""
    scores, flags, num_gt = [], [], 0
    for detection, target in zip(detections, targets):
        gt = target["boxes"][target["labels"] == label]
        mine = detection["labels"] == label
        dt, dt_scores = detection["boxes"][mine], detection["scores"][mine]
        order = np.argsort(-dt_scores, kind="mergesort")[:max_detections]
        dt, dt_scores = dt[order], dt_scores[order]
        num_gt += len(gt)
        flags.append(_match(_pairwise_iou(dt, gt), thresholds))
        scores.append(dt_scores)
    if num_gt == 0:
        return None
    scores = np.concatenate(scores)
    flags = np.concatenate(flags, axis=1)[:, np.argsort(-scores, kind="mergesort")]
    return _precision_at_recalls(flags, num_gt)


def _prepare(items, with_scores):
    prepared = []
    for item in items:
        entry = {"boxes": _numpy(item["boxes"], np.float64).reshape(-1, 4),
                 "labels": _numpy(item["labels"], np.int64).reshape(-1)}
        if with_scores:
            entry["scores"] = _numpy(item["scores"], np.float64).reshape(-1)
            if not len(entry["scores"]) == len(entry["labels"]) == len(entry["boxes"]):
                raise ValueError("each detection needs as many boxes, scores and labels")
        elif len(entry["labels"]) != len(entry["boxes"]):
            raise ValueError("each target needs as many boxes as labels")
        prepared.append(entry)
    return prepared


def mean_average_precision(detections, targets, num_classes=None, max_detections=100):
    """COCO-style mAP of ``detections`` against ``targets``, one dict per image each.

    Args:
        detections: ``[{"boxes": (k, 4) xyxy, "scores": (k,), "labels": (k,)}, ...]``
            (ember tensors or NumPy arrays).
        targets: ``[{"boxes": (g, 4) xyxy, "labels": (g,)}, ...]``, same length.
        num_classes: labels are ``0 .. num_classes - 1``; default: every label seen.
        max_detections: per image and class, after sorting by score (COCO: 100).

    Returns:
        ``{"map": mAP@0.5:0.95, "map_50": ..., "map_75": ..., "ap_per_class": [...]}``;
        classes without ground truth get -1 and are left out of the means; with no
        ground truth at all every mean is -1, as COCOeval reports.

    >>> target = {"boxes": [[0, 0, 10, 10]], "labels": [0]}
    >>> round(mean_average_precision([{**target, "scores": [0.9]}], [target])["map"], 6)
    1.0
    """
    if len(detections) != len(targets):
        raise ValueError(f"got detections for {len(detections)} images but targets for {len(targets)}")
    detections, targets = _prepare(detections, True), _prepare(targets, False)
    if num_classes is None:
        labels = [entry["labels"] for entry in detections + targets]
        num_classes = int(max((label.max(initial=-1) for label in labels), default=-1)) + 1
    precision = np.full((len(IOU_THRESHOLDS), len(RECALL_THRESHOLDS), num_classes), -1.0)
    for label in range(num_classes):
        per_class = _class_precision(detections, targets, label, max_detections, IOU_THRESHOLDS)
        if per_class is not None:
            precision[:, :, label] = per_class
    return _summarise(precision)


def _mean(values):
    valid = values[values > -1]
    return float(valid.mean()) if valid.size else -1.0


def _summarise(precision):
    return {
        "map": _mean(precision),
        "map_50": _mean(precision[0]),
        "map_75": _mean(precision[5]),
        "ap_per_class": [_mean(precision[:, :, label]) for label in range(precision.shape[2])],
    }


class MeanAveragePrecision:
    """Accumulates detections and targets batch by batch; ``compute()`` gives the mAP dict.

    The interface of torchmetrics' ``MeanAveragePrecision`` (``update``, ``compute``,
    ``reset``), without its dependency on torch.
    """

    def __init__(self, num_classes=None, max_detections=100):
        self.num_classes, self.max_detections = num_classes, max_detections
        self.reset()

    def reset(self):
        self.detections, self.targets = [], []

    def update(self, detections, targets):
        self.detections.extend(_prepare(detections, True))
        self.targets.extend(_prepare(targets, False))

    def compute(self):
        return mean_average_precision(self.detections, self.targets, self.num_classes, self.max_detections)
