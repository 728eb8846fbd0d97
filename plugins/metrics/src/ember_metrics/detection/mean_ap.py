"""``MeanAveragePrecision``: COCO's box mAP and mAR (@0.5:0.95, @0.5, @0.75, by object
size, by the number of detections kept).

PyTorch counterpart: none in torch; torchmetrics/detection/mean_ap.py (torchmetrics 1.9, ``iou_type="bbox"``),
which hands the work to pycocotools' cocoeval.py (``COCOeval.evaluateImg``, ``accumulate``,
``summarize``); this is a NumPy implementation of the algorithm COCOeval documents,
checked against both (tests/plugins/metrics/test_mean_ap.py). It began as the YOLO zoo's
own mAP, which now reaches it through ``ember.metrics`` (the "metrics" catalogue).
Left out: ``iou_type="segm"``, ``average="micro"``, ``extended_summary``.

NOTE [ COCO's average precision ]
Per image and class, the detections are sorted by score (stable) and cut to the largest
``max_detection_thresholds`` (100); ground truth outside the area range of the summary
(small < 32^2 <= medium < 96^2 <= large, by box area) or marked ``iscrowd`` is
"ignored", and sorted after the rest. Each detection, in score order, takes the
unmatched ground-truth box of highest IoU provided that IoU >= t (ties go to the later
box, as in COCOeval; an ignored box only when no other qualifies; a crowd box may take
several detections, its IoU measured against the detection's own area). A detection
matched to an ignored box, or unmatched and outside the area range, is ignored too.
Then, per class, all images' detections are ranked by score together; cumulative true
and false positives give precision and recall; precision is made non-increasing from the
right and read at 101 recall points 0, 0.01, ..., 1 (a point past the last recall
reached reads 0); recall is the last recall reached. AP is the mean of the 101 values;
mAP the mean over classes that have ground truth (a class without is -1, left out) and
over the ten IoU thresholds 0.50, 0.55, ..., 0.95; mAR likewise of the recalls.
Everything is float64: float32 IoUs move matches that sit exactly on a threshold.
"""

import numpy as np

from ember_metrics.metric import Metric, as_numpy, as_tensor, dim_zero_cat

# the same expressions COCOeval uses, so that the thresholds are the same float64 numbers
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS = np.linspace(0.0, 1.0, int(np.round((1.0 - 0.0) / 0.01)) + 1, endpoint=True)
AREA_RANGES = {"all": (0.0, 1e5 ** 2), "small": (0.0, 32.0 ** 2), "medium": (32.0 ** 2, 96.0 ** 2),
               "large": (96.0 ** 2, 1e5 ** 2)}
BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


class MeanAveragePrecision(Metric):
    """COCO's mean average precision and recall of box detections.

    Args:
        box_format: "xyxy" (default), "xywh" or "cxcywh".
        iou_type: "bbox" (the only one here).
        iou_thresholds: default 0.50, 0.55, ..., 0.95.
        rec_thresholds: default 0, 0.01, ..., 1.
        max_detection_thresholds: three numbers of detections per image (default 1, 10, 100).
        class_metrics: also give ``map_per_class`` and ``mar_{last}_per_class``.

    ``update(preds, target)`` takes one dict per image: ``preds`` with ``boxes`` (k, 4),
    ``scores`` (k,) and ``labels`` (k,); ``target`` with ``boxes`` and ``labels`` (and
    optionally ``iscrowd``). ``compute()`` returns the dict torchmetrics returns.

    >>> import ember
    >>> target = {"boxes": ember.tensor([[0.0, 0.0, 10.0, 10.0]]), "labels": ember.tensor([0])}
    >>> metric = MeanAveragePrecision()
    >>> metric.update([dict(target, scores=ember.tensor([0.9]))], [target])
    >>> float(metric.compute()["map"])
    1.0
    """

    higher_is_better = True
    full_state_update = True  # (torchmetrics': its batch value is not a fold of states)

    def __init__(self, box_format="xyxy", iou_type="bbox", iou_thresholds=None, rec_thresholds=None,
                 max_detection_thresholds=None, class_metrics=False, **kwargs):
        super().__init__(**kwargs)
        if box_format not in BOX_FORMATS:
            raise ValueError(f"Expected argument `box_format` to be one of {BOX_FORMATS} but got {box_format}")
        if iou_type != "bbox":
            raise ValueError(f"ember-metrics' MeanAveragePrecision supports iou_type='bbox' only, got {iou_type!r}")
        self.box_format, self.iou_type, self.class_metrics = box_format, iou_type, class_metrics
        self.iou_thresholds = list(IOU_THRESHOLDS) if iou_thresholds is None else list(iou_thresholds)
        self.rec_thresholds = list(RECALL_THRESHOLDS) if rec_thresholds is None else list(rec_thresholds)
        max_detections = [1, 10, 100] if max_detection_thresholds is None else sorted(max_detection_thresholds)
        if len(max_detections) != 3:
            raise ValueError("When providing a list of max detection thresholds it should have length 3."
                             f" Got value {len(max_detections)}")
        self.max_detection_thresholds = max_detections
        # each image's rows, and how many rows it has (the NOTE on image boundaries below)
        for name in ("detection_box", "detection_scores", "detection_labels", "detection_counts",
                     "groundtruth_box", "groundtruth_labels", "groundtruth_crowds", "groundtruth_counts"):
            self.add_state(name, [], dist_reduce_fx="cat")

    def update(self, preds, target):
        """Keep one batch of images' detections and ground truth."""
        if not isinstance(preds, (list, tuple)) or not isinstance(target, (list, tuple)):
            raise ValueError("Expected argument `preds` and `target` to be of type Sequence")
        if len(preds) != len(target):
            raise ValueError(f"Expected argument `preds` and `target` to have the same length, but got {len(preds)} "
                             f"and {len(target)}")
        for item in preds:
            boxes, labels = self._boxes(item), as_numpy(item["labels"], np.int64).reshape(-1)
            scores = as_numpy(item["scores"], np.float64).reshape(-1)
            if not len(boxes) == len(scores) == len(labels):
                raise ValueError("Input 'boxes', 'scores' and 'labels' of each prediction should have the same length")
            self._keep("detection", boxes, labels, scores=scores)
        for item in target:
            boxes, labels = self._boxes(item), as_numpy(item["labels"], np.int64).reshape(-1)
            if len(boxes) != len(labels):
                raise ValueError("Input 'boxes' and 'labels' of each target should have the same length")
            crowds = as_numpy(item.get("iscrowd", np.zeros(len(labels))), np.int64).reshape(-1)
            self._keep("groundtruth", boxes, labels, crowds=crowds)

    def _boxes(self, item):
        return to_xyxy(as_numpy(item["boxes"], np.float64).reshape(-1, 4), self.box_format)

    def _keep(self, kind, boxes, labels, scores=None, crowds=None):
        getattr(self, f"{kind}_box").append(as_tensor(boxes))
        getattr(self, f"{kind}_labels").append(as_tensor(labels))
        getattr(self, f"{kind}_counts").append(as_tensor(np.array([len(labels)], dtype=np.int64)))
        if scores is not None:
            self.detection_scores.append(as_tensor(scores))
        else:
            self.groundtruth_crowds.append(as_tensor(crowds))

    def _images(self, kind, fields):
        """The kept rows of ``kind`` split back into images: a list of dicts of arrays."""
        if not getattr(self, f"{kind}_counts"):
            return []
        counts = dim_zero_cat(getattr(self, f"{kind}_counts")).numpy()
        splits = np.cumsum(counts)[:-1]
        columns = {field: np.split(dim_zero_cat(getattr(self, f"{kind}_{field}")).numpy(), splits)
                   for field in fields}
        return [{field: columns[field][i] for field in fields} for i in range(len(counts))]

    def compute(self):
        detections = self._images("detection", ("box", "scores", "labels"))
        targets = self._images("groundtruth", ("box", "labels", "crowds"))
        labels = [item["labels"] for item in detections + targets]
        classes = np.unique(np.concatenate(labels)) if labels else np.zeros(0, dtype=np.int64)
        precision, recall = evaluate(detections, targets, classes, np.array(self.iou_thresholds),
                                     np.array(self.rec_thresholds), self.max_detection_thresholds)
        return self._summary(precision, recall, classes)

    def _summary(self, precision, recall, classes):
        """COCOeval's ``summarize``, as torchmetrics names the numbers."""
        last = len(self.max_detection_thresholds) - 1
        areas = list(AREA_RANGES)

        def mean_precision(area="all", iou=None):
            chosen = precision[..., areas.index(area), last]
            if iou is not None:
                found = [i for i, t in enumerate(self.iou_thresholds) if np.isclose(t, iou)]
                if not found:
                    return -1.0
                chosen = chosen[found[0]]
            return _mean(chosen)

        result = {"map": mean_precision(), "map_50": mean_precision(iou=0.5), "map_75": mean_precision(iou=0.75),
                  "map_small": mean_precision("small"), "map_medium": mean_precision("medium"),
                  "map_large": mean_precision("large")}
        for m, limit in enumerate(self.max_detection_thresholds):
            result[f"mar_{limit}"] = _mean(recall[:, :, 0, m])
        for area in ("small", "medium", "large"):
            result[f"mar_{area}"] = _mean(recall[:, :, areas.index(area), last])
        result = {key: as_tensor(np.float32(value)) for key, value in result.items()}
        per_class_map, per_class_mar = [-1.0], [-1.0]
        if self.class_metrics and len(classes):
            per_class_map = [_mean(precision[:, :, k, 0, last]) for k in range(len(classes))]
            per_class_mar = [_mean(recall[:, k, 0, last]) for k in range(len(classes))]
        result["map_per_class"] = as_tensor(np.array(per_class_map, dtype=np.float32))
        result[f"mar_{self.max_detection_thresholds[-1]}_per_class"] = as_tensor(
            np.array(per_class_mar, dtype=np.float32))
        result["classes"] = as_tensor(classes.astype(np.int32))
        return result


# NOTE [ Image boundaries in cat states ]
# torchmetrics keeps a list of tensors per image and syncs them with its own gather of
# Python lists. ember keeps plain "cat" states instead: the rows of every image one
# after another, and a count of rows per image. Ranks concatenate both in rank order, so
# the counts still split the concatenated rows into the images they came from, and the
# metric needs no sync of its own.


def to_xyxy(boxes, box_format):
    """(k, 4) boxes in ``box_format`` as corners (x1, y1, x2, y2)."""
    if box_format == "xywh":
        return np.concatenate([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]], axis=1)
    if box_format == "cxcywh":
        return np.concatenate([boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2], axis=1)
    return boxes


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def pairwise_iou(detections, truths, crowds):
    """(D, G) IoU of xyxy boxes in float64; against a crowd box, the intersection over the detection's area."""
    width = np.minimum(detections[:, None, 2], truths[None, :, 2]) - np.maximum(detections[:, None, 0],
                                                                                 truths[None, :, 0])
    height = np.minimum(detections[:, None, 3], truths[None, :, 3]) - np.maximum(detections[:, None, 1],
                                                                                  truths[None, :, 1])
    inter = np.clip(width, 0, None) * np.clip(height, 0, None)
    union = box_area(detections)[:, None] + box_area(truths)[None, :] - inter
    union = np.where(crowds[None, :] != 0, box_area(detections)[:, None], union)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def match_image(ious, ignored, crowds, thresholds):
    """NOTE [ COCO's average precision ]: for each threshold and detection (in
    score order), the index of the ground-truth box it takes, or -1. ``ignored``
    boxes come last."""
    num_dt, num_gt = ious.shape
    matches = np.full((len(thresholds), num_dt), -1)
    # only a detection that overlaps some box by the lowest threshold can take one (most
    # of an evaluation's low-confidence detections overlap nothing): skip the others
    lowest = min(min(thresholds), 1 - 1e-10) if len(thresholds) else 1.0
    reachable = np.nonzero(ious.max(axis=1, initial=-1.0) >= lowest)[0]
    for t, threshold in enumerate(thresholds):
        taken = np.zeros(num_gt, dtype=bool)
        for d in reachable:
            candidates = np.where(taken & (crowds == 0), -1.0, ious[d])
            g = _best(candidates, ~ignored, threshold)
            if g < 0:
                g = _best(candidates, ignored, threshold)
            if g >= 0:
                taken[g] = True
                matches[t, d] = g
    return matches


def _best(candidates, allowed, threshold):
    """The last index among ``allowed`` of the highest candidate, if it reaches the threshold."""
    values = np.where(allowed, candidates, -1.0)
    best = values.max(initial=-1.0)
    if best < min(threshold, 1 - 1e-10):
        return -1
    return len(values) - 1 - int(np.argmax(values[::-1] == best))


def _image_class(detection, target, label, area, max_detections, thresholds):
    """One image's detections of ``label`` (score order, cut), their match flags and
    ignore flags (T, D), and its number of ground-truth boxes that count."""
    gt_mine = target["labels"] == label
    gt, crowds = target["box"][gt_mine], target["crowds"][gt_mine]
    gt_area = box_area(gt)
    ignored = (crowds != 0) | (gt_area < area[0]) | (gt_area > area[1])
    order = np.argsort(ignored, kind="mergesort")
    gt, crowds, ignored = gt[order], crowds[order], ignored[order]
    dt_mine = detection["labels"] == label
    dt, scores = detection["box"][dt_mine], detection["scores"][dt_mine]
    keep = np.argsort(-scores, kind="mergesort")[:max_detections]
    dt, scores = dt[keep], scores[keep]
    matches = match_image(pairwise_iou(dt, gt, crowds), ignored, crowds, thresholds)
    matched = matches >= 0
    dt_area = box_area(dt)
    outside = (dt_area < area[0]) | (dt_area > area[1])
    matched_ignored = np.append(ignored, False)[matches]  # (-1, no match, reads the False appended)
    dt_ignored = np.where(matched, matched_ignored, outside[None, :])
    return scores, matched, dt_ignored, int((~ignored).sum())


def evaluate(detections, targets, classes, iou_thresholds, rec_thresholds, max_detections):
    """COCOeval's ``evaluate`` and ``accumulate``: precision (T, R, K, A, M) and recall (T, K, A, M), -1 where a
    class has no ground truth that counts."""
    if len(detections) != len(targets):
        raise ValueError(f"got detections for {len(detections)} images but targets for {len(targets)}")
    shape = (len(iou_thresholds), len(classes), len(AREA_RANGES), len(max_detections))
    precision = -np.ones((shape[0], len(rec_thresholds), *shape[1:]))
    recall = -np.ones(shape)
    for k, label in enumerate(classes):
        for a, area in enumerate(AREA_RANGES.values()):
            per_image = [_image_class(detection, target, label, area, max_detections[-1], iou_thresholds)
                         for detection, target in zip(detections, targets)]
            for m, limit in enumerate(max_detections):
                curve = _accumulate(per_image, limit, rec_thresholds)
                if curve is not None:
                    precision[:, :, k, a, m], recall[:, k, a, m] = curve
    return precision, recall


def _accumulate(per_image, limit, rec_thresholds):
    """(T, R) interpolated precision and (T,) recall over the images; None
    without ground truth."""
    num_gt = sum(item[3] for item in per_image)
    if num_gt == 0:
        return None
    scores = np.concatenate([item[0][:limit] for item in per_image])
    order = np.argsort(-scores, kind="mergesort")
    matched = np.concatenate([item[1][:, :limit] for item in per_image], axis=1)
    ignored = np.concatenate([item[2][:, :limit] for item in per_image], axis=1)
    matched, ignored = matched[:, order], ignored[:, order]
    tp = np.cumsum(matched & ~ignored, axis=1, dtype=np.float64)
    fp = np.cumsum(~matched & ~ignored, axis=1, dtype=np.float64)
    precision = np.zeros((tp.shape[0], len(rec_thresholds)))
    recall = np.zeros(tp.shape[0])
    for t in range(tp.shape[0]):
        rc = tp[t] / num_gt
        pr = tp[t] / (fp[t] + tp[t] + np.spacing(1))
        recall[t] = rc[-1] if len(rc) else 0.0
        pr = np.maximum.accumulate(pr[::-1])[::-1]  # non-increasing from the right
        where = np.searchsorted(rc, rec_thresholds, side="left")
        inside = where < len(pr)
        precision[t, inside] = pr[where[inside]]
    return precision, recall


def _mean(values):
    valid = values[values > -1]
    return float(valid.mean()) if valid.size else -1.0
