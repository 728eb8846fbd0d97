"""ember_metrics' MeanAveragePrecision against pycocotools' COCOeval (all twelve summary
numbers, and the per-class numbers read from its arrays as torchmetrics reads them), on
crafted and random cases. (torchmetrics' own MeanAveragePrecision needs torchvision, which
has no CPU build here; with its default backend it runs this same COCOeval.)"""

import contextlib
import io

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

import ember
from ember_metrics import MeanAveragePrecision

# COCOeval's stats, in order, under torchmetrics' names
STATS = ("map", "map_50", "map_75", "map_small", "map_medium", "map_large", "mar_1", "mar_10", "mar_100",
         "mar_small", "mar_medium", "mar_large")


def _xywh(box):
    x1, y1, x2, y2 = (float(v) for v in box)
    return [x1, y1, x2 - x1, y2 - y1]


def coco_reference(detections, targets):
    """COCOeval's twelve numbers, and per class (torchmetrics' ``class_metrics``)
    its mAP and mAR@100; None when there is no detection at all."""
    images = [{"id": i + 1, "width": 256, "height": 256} for i in range(len(targets))]
    labels = sorted({int(label) for item in detections + targets
                     for label in item["labels"]})
    annotations = []
    for i, target in enumerate(targets):
        crowds = target.get("iscrowd", np.zeros(len(target["labels"])))
        for box, label, crowd in zip(target["boxes"], target["labels"], crowds):
            xywh = _xywh(box)
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1,
                                "category_id": int(label), "bbox": xywh,
                                "area": xywh[2] * xywh[3], "iscrowd": int(crowd)})
    results = [{"image_id": i + 1, "category_id": int(label), "bbox": _xywh(box),
                "score": float(score)}
               for i, found in enumerate(detections)
               for box, label, score in zip(found["boxes"], found["labels"],
                                            found["scores"])]
    if not results:
        return None  # COCO.loadRes([]) raises IndexError
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": annotations,
                      "categories": [{"id": c, "name": str(c)} for c in labels]}
        gt.createIndex()
        evaluator = COCOeval(gt, gt.loadRes(results), "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    # area "all", 100 detections: [T, R, K] precision, [T, K] recall
    precision = evaluator.eval["precision"][:, :, :, 0, -1]
    recall = evaluator.eval["recall"][:, :, 0, -1]
    classes = range(len(labels))
    per_class = {"map_per_class": [_mean(precision[:, :, k]) for k in classes],
                 "mar_100_per_class": [_mean(recall[:, k]) for k in classes],
                 "classes": labels}
    return {**dict(zip(STATS, evaluator.stats)), **per_class}


def _mean(values):
    valid = values[values > -1]
    return valid.mean() if valid.size else -1.0


def ours(detections, targets, batch=5, **options):
    metric = MeanAveragePrecision(**options)
    for start in range(0, len(targets), batch):
        chosen = slice(start, start + batch)
        metric.update([{k: ember.from_numpy(np.asarray(v)) for k, v in d.items()} for d in detections[chosen]],
                      [{k: ember.from_numpy(np.asarray(v)) for k, v in t.items()} for t in targets[chosen]])
    return metric.compute()


def assert_matches_coco(detections, targets):
    result = ours(detections, targets)
    reference = coco_reference(detections, targets)
    np.testing.assert_allclose([float(result[key]) for key in STATS], [reference[key] for key in STATS], atol=1e-6)
    return result


def _random_case(rng, num_images, num_classes, jitter, sizes=(4, 16)):
    detections, targets = [], []
    for _ in range(num_images):
        count = int(rng.integers(0, 5))
        corners = rng.uniform(0, 48, size=(count, 2))
        boxes = np.concatenate([corners, corners + rng.uniform(*sizes, size=(count, 2))], axis=1)
        labels = rng.integers(0, num_classes, size=count)
        targets.append({"boxes": boxes, "labels": labels})
        # detections: jittered copies of some truths, plus false positives
        keep = rng.random(count) < 0.8
        noisy = boxes[keep] + rng.normal(0, jitter, size=(int(keep.sum()), 4))
        noisy[:, 2:] = np.maximum(noisy[:, 2:], noisy[:, :2] + 1)  # still valid xyxy boxes
        extra = int(rng.integers(0, 4))
        extra_corners = rng.uniform(0, 48, size=(extra, 2))
        false = np.concatenate([extra_corners, extra_corners + rng.uniform(*sizes, size=(extra, 2))], axis=1)
        det_labels = np.concatenate([np.where(rng.random(int(keep.sum())) < 0.9, labels[keep],
                                              rng.integers(0, num_classes, size=int(keep.sum()))),
                                     rng.integers(0, num_classes, size=extra)])
        detections.append({"boxes": np.concatenate([noisy, false]), "labels": det_labels,
                           "scores": rng.random(len(det_labels))})
    return detections, targets


@pytest.mark.parametrize("seed", range(4))
def test_random_cases_match_cocoeval(seed):
    rng = np.random.default_rng(seed)
    detections, targets = _random_case(rng, num_images=12, num_classes=3, jitter=0.5 + 0.5 * seed)
    result = assert_matches_coco(detections, targets)
    assert 0 < float(result["map"]) < 1  # the case is neither trivial nor hopeless


@pytest.mark.parametrize("seed", range(2))
def test_small_medium_and_large_boxes_and_each_class_match_cocoeval(seed):
    rng = np.random.default_rng(11 + seed)
    detections, targets = _random_case(rng, num_images=15, num_classes=3, jitter=1.0, sizes=(10, 140))
    result = assert_matches_coco(detections, targets)
    assert all(float(result[key]) > 0 for key in ("map_small", "map_medium", "map_large"))
    reference = coco_reference(detections, targets)
    mine = ours(detections, targets, class_metrics=True)
    for key in ("map_per_class", "mar_100_per_class", "classes"):
        np.testing.assert_allclose(mine[key].numpy(), reference[key], atol=1e-6, err_msg=key)


def test_box_formats_give_the_same_numbers():
    rng = np.random.default_rng(4)
    detections, targets = _random_case(rng, num_images=6, num_classes=2, jitter=1.0)

    def convert(items, to_format):
        converted = []
        for item in items:
            x1, y1, x2, y2 = np.asarray(item["boxes"], dtype=np.float64).reshape(-1, 4).T
            boxes = {"xywh": [x1, y1, x2 - x1, y2 - y1],
                     "cxcywh": [(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1]}[to_format]
            converted.append(dict(item, boxes=np.stack(boxes, axis=1)))
        return converted

    expected = ours(detections, targets)
    for box_format in ("xywh", "cxcywh"):
        got = ours(convert(detections, box_format), convert(targets, box_format), box_format=box_format)
        for key in STATS:
            assert float(got[key]) == pytest.approx(float(expected[key]), abs=1e-6)


def test_crowd_boxes_match_cocoeval():
    targets = [{"boxes": np.array([[0.0, 0, 40, 40], [50, 50, 60, 60]]), "labels": np.array([0, 0]),
                "iscrowd": np.array([1, 0])},
               {"boxes": np.array([[5.0, 5, 20, 20]]), "labels": np.array([0]), "iscrowd": np.array([0])}]
    detections = [{"boxes": np.array([[0.0, 0, 10, 10], [2, 2, 12, 12], [50, 50, 60, 61]]),
                   "labels": np.array([0, 0, 0]), "scores": np.array([0.9, 0.8, 0.7])},
                  {"boxes": np.array([[5.0, 5, 19, 20]]), "labels": np.array([0]), "scores": np.array([0.6])}]
    assert_matches_coco(detections, targets)


def test_perfect_detections_score_one():
    targets = [{"boxes": np.array([[0, 0, 10, 10], [20, 20, 40, 30]]), "labels": np.array([0, 1])}]
    detections = [{**targets[0], "scores": np.array([0.9, 0.8])}]
    assert float(assert_matches_coco(detections, targets)["map"]) == pytest.approx(1.0)


def test_class_without_ground_truth_is_left_out():
    # class 2 has detections but no ground truth: COCO marks it -1 and leaves it out of the mean
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0])}]
    detections = [{"boxes": np.array([[0, 0, 10, 10], [30, 30, 40, 40]]), "labels": np.array([0, 2]),
                   "scores": np.array([0.5, 0.9])}]
    assert float(assert_matches_coco(detections, targets)["map"]) == pytest.approx(1.0)
    per_class = ours(detections, targets, class_metrics=True)
    assert per_class["classes"].tolist() == [0, 2] and per_class["map_per_class"].tolist() == [1.0, -1.0]


def test_images_without_ground_truth_contribute_false_positives():
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0])},
               {"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64)}]
    detections = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0]), "scores": np.array([0.5])},
                  {"boxes": np.array([[5, 5, 20, 20]]), "labels": np.array([0]), "scores": np.array([0.9])}]
    assert float(assert_matches_coco(detections, targets)["map"]) < 1


def test_iou_exactly_at_threshold_is_a_match():
    # IoU 0.5 exactly: [0,0,10,10] vs [0,0,10,20] is 100 / 200; COCO matches at IoU >= t
    targets = [{"boxes": np.array([[0.0, 0, 10, 20]]), "labels": np.array([0])}]
    detections = [{"boxes": np.array([[0.0, 0, 10, 10]]), "labels": np.array([0]), "scores": np.array([1.0])}]
    result = assert_matches_coco(detections, targets)
    assert float(result["map_50"]) == pytest.approx(1.0) and float(result["map_75"]) == 0.0


def test_equal_iou_goes_to_the_later_ground_truth():
    # two truths equally overlapped by the first detection; the second detection fits the first truth only
    targets = [{"boxes": np.array([[0.0, 0, 10, 10], [10, 0, 20, 10]]), "labels": np.array([0, 0])}]
    detections = [{"boxes": np.array([[5.0, 0, 15, 10], [0, 0, 10, 10]]), "labels": np.array([0, 0]),
                   "scores": np.array([0.9, 0.8])}]
    assert_matches_coco(detections, targets)


def test_more_than_max_detections_per_image_are_cut():
    rng = np.random.default_rng(7)
    corners = rng.uniform(0, 50, size=(130, 2))
    boxes = np.concatenate([corners, corners + 8], axis=1)
    targets = [{"boxes": boxes[:120], "labels": np.zeros(120, dtype=np.int64)}]
    detections = [{"boxes": boxes, "labels": np.zeros(130, dtype=np.int64), "scores": rng.random(130)}]
    assert_matches_coco(detections, targets)


def test_no_detections_at_all():
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([1])}]
    detections = [{"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64), "scores": np.zeros(0)}]
    assert coco_reference(detections, targets) is None  # (COCO.loadRes([]) refuses)
    result = ours(detections, targets, class_metrics=True)
    # what COCOeval's arithmetic gives: recall never rises, so every precision and recall of class 1 is 0
    assert all(float(result[key]) == 0.0 for key in ("map", "map_50", "map_small", "mar_100", "mar_small"))
    assert float(result["map_medium"]) == float(result["map_large"]) == -1.0  # no truth of those sizes
    assert result["classes"].tolist() == [1] and result["map_per_class"].tolist() == [0.0]


def test_no_ground_truth_at_all_is_minus_one():
    targets = [{"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64)}]
    detections = [{"boxes": np.array([[0, 0, 5, 5]]), "labels": np.array([0]), "scores": np.array([0.3])}]
    assert float(assert_matches_coco(detections, targets)["map"]) == -1.0


def test_mismatched_lengths_raise():
    metric = MeanAveragePrecision()
    with pytest.raises(ValueError, match="same length"):
        metric.update([{"boxes": np.zeros((0, 4)), "labels": [], "scores": []}] * 2,
                      [{"boxes": np.zeros((0, 4)), "labels": []}])
    with pytest.raises(ValueError, match="iou_type='bbox'"):
        MeanAveragePrecision(iou_type="segm")
