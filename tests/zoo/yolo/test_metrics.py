"""ember_zoo_yolo.metrics against pycocotools' COCOeval on crafted and random cases."""

import contextlib
import io

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

import ember
from ember_zoo_yolo.metrics import MeanAveragePrecision, mean_average_precision


def _xywh(box):
    x1, y1, x2, y2 = (float(v) for v in box)
    return [x1, y1, x2 - x1, y2 - y1]


def coco_reference(detections, targets, num_classes):
    """(mAP@0.5:0.95, mAP@0.5, mAP@0.75) from COCOeval; None when there is no
    detection at all."""
    images = [{"id": i + 1, "width": 64, "height": 64} for i in range(len(targets))]
    annotations = []
    for i, target in enumerate(targets):
        for box, label in zip(target["boxes"], target["labels"]):
            xywh = _xywh(box)
            annotations.append({"id": len(annotations) + 1, "image_id": i + 1,
                                "category_id": int(label) + 1, "bbox": xywh,
                                "area": xywh[2] * xywh[3], "iscrowd": 0})
    results = [{"image_id": i + 1, "category_id": int(label) + 1, "bbox": _xywh(box),
                "score": float(score)}
               for i, detection in enumerate(detections)
               for box, label, score in zip(detection["boxes"], detection["labels"],
                                            detection["scores"])]
    if not results:
        return None  # COCO.loadRes([]) raises IndexError (notes/zoo.md, section 6)
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": annotations,
                      "categories": [{"id": c + 1, "name": str(c)}
                                     for c in range(num_classes)]}
        gt.createIndex()
        evaluator = COCOeval(gt, gt.loadRes(results), "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    return evaluator.stats[0], evaluator.stats[1], evaluator.stats[2]


def assert_matches_coco(detections, targets, num_classes):
    ours = mean_average_precision(detections, targets, num_classes=num_classes)
    reference = coco_reference(detections, targets, num_classes)
    np.testing.assert_allclose([ours["map"], ours["map_50"], ours["map_75"]], reference, atol=1e-6)
    return ours


def _random_case(rng, num_images, num_classes, jitter):
    detections, targets = [], []
    for _ in range(num_images):
        count = int(rng.integers(0, 5))
        corners = rng.uniform(0, 48, size=(count, 2))
        sizes = rng.uniform(4, 16, size=(count, 2))
        boxes = np.concatenate([corners, corners + sizes], axis=1)
        labels = rng.integers(0, num_classes, size=count)
        targets.append({"boxes": boxes, "labels": labels})
        # detections: jittered copies of some truths, plus false positives
        keep = rng.random(count) < 0.8
        noisy = boxes[keep] + rng.normal(0, jitter, size=(int(keep.sum()), 4))
        noisy[:, 2:] = np.maximum(noisy[:, 2:], noisy[:, :2] + 1)  # still valid xyxy boxes
        extra = int(rng.integers(0, 4))
        extra_corners = rng.uniform(0, 48, size=(extra, 2))
        false = np.concatenate([extra_corners, extra_corners + rng.uniform(4, 16, size=(extra, 2))], axis=1)
        det_labels = np.concatenate([np.where(rng.random(int(keep.sum())) < 0.9, labels[keep],
                                              rng.integers(0, num_classes, size=int(keep.sum()))),
                                     rng.integers(0, num_classes, size=extra)])
        detections.append({"boxes": np.concatenate([noisy, false]), "labels": det_labels,
                           "scores": rng.random(len(det_labels))})
    return detections, targets


@pytest.mark.parametrize("seed", range(6))
def test_random_cases_match_cocoeval(seed):
    rng = np.random.default_rng(seed)
    detections, targets = _random_case(rng, num_images=12, num_classes=3, jitter=0.5 + 0.5 * seed)
    ours = assert_matches_coco(detections, targets, 3)
    assert 0 < ours["map"] < 1  # the case is neither trivial nor hopeless


def test_perfect_detections_score_one():
    targets = [{"boxes": np.array([[0, 0, 10, 10], [20, 20, 40, 30]]), "labels": np.array([0, 1])}]
    detections = [{**targets[0], "scores": np.array([0.9, 0.8])}]
    ours = assert_matches_coco(detections, targets, 2)
    assert ours["map"] == pytest.approx(1.0)


def test_class_without_ground_truth_is_left_out():
    # class 2 has detections but no ground truth: COCO marks it -1 and leaves it out of the mean
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0])}]
    detections = [{"boxes": np.array([[0, 0, 10, 10], [30, 30, 40, 40]]), "labels": np.array([0, 2]),
                   "scores": np.array([0.5, 0.9])}]
    ours = assert_matches_coco(detections, targets, 3)
    assert ours["ap_per_class"][1] == -1 and ours["ap_per_class"][2] == -1
    assert ours["map"] == pytest.approx(1.0)


def test_images_without_ground_truth_contribute_false_positives():
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0])},
               {"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64)}]
    detections = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([0]), "scores": np.array([0.5])},
                  {"boxes": np.array([[5, 5, 20, 20]]), "labels": np.array([0]), "scores": np.array([0.9])}]
    ours = assert_matches_coco(detections, targets, 1)
    assert ours["map"] < 1


def test_iou_exactly_at_threshold_is_a_match():
    # IoU 0.5 exactly: [0,0,10,10] vs [0,0,10,20] is 100 / 200; COCO matches at IoU >= t
    targets = [{"boxes": np.array([[0.0, 0, 10, 20]]), "labels": np.array([0])}]
    detections = [{"boxes": np.array([[0.0, 0, 10, 10]]), "labels": np.array([0]), "scores": np.array([1.0])}]
    ours = assert_matches_coco(detections, targets, 1)
    assert ours["map_50"] == pytest.approx(1.0) and ours["map_75"] == 0.0


def test_equal_iou_goes_to_the_later_ground_truth():
    # two truths equally overlapped by the first detection; the second detection fits the first truth only
    targets = [{"boxes": np.array([[0.0, 0, 10, 10], [10, 0, 20, 10]]), "labels": np.array([0, 0])}]
    detections = [{"boxes": np.array([[5.0, 0, 15, 10], [0, 0, 10, 10]]), "labels": np.array([0, 0]),
                   "scores": np.array([0.9, 0.8])}]
    assert_matches_coco(detections, targets, 1)


def test_more_than_max_detections_per_image_are_cut():
    rng = np.random.default_rng(7)
    corners = rng.uniform(0, 50, size=(130, 2))
    boxes = np.concatenate([corners, corners + 8], axis=1)
    targets = [{"boxes": boxes[:120], "labels": np.zeros(120, dtype=np.int64)}]
    detections = [{"boxes": boxes, "labels": np.zeros(130, dtype=np.int64), "scores": rng.random(130)}]
    assert_matches_coco(detections, targets, 1)


def test_no_detections_at_all():
    targets = [{"boxes": np.array([[0, 0, 10, 10]]), "labels": np.array([1])}]
    detections = [{"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64), "scores": np.zeros(0)}]
    assert coco_reference(detections, targets, 2) is None
    result = mean_average_precision(detections, targets, num_classes=2)
    # what COCOeval's arithmetic gives: recall never rises, so every precision sample of class 1 is 0
    assert result["map"] == 0.0 and result["ap_per_class"] == [-1.0, 0.0]


def test_no_ground_truth_at_all_is_minus_one():
    targets = [{"boxes": np.zeros((0, 4)), "labels": np.zeros(0, dtype=np.int64)}]
    detections = [{"boxes": np.array([[0, 0, 5, 5]]), "labels": np.array([0]), "scores": np.array([0.3])}]
    ours = assert_matches_coco(detections, targets, 1)
    assert ours["map"] == -1.0


def test_accumulator_accepts_ember_tensors_and_matches_the_function():
    rng = np.random.default_rng(3)
    detections, targets = _random_case(rng, num_images=8, num_classes=2, jitter=2.0)
    metric = MeanAveragePrecision(num_classes=2)
    for start in range(0, 8, 3):
        metric.update([{k: ember.from_numpy(np.asarray(v)) for k, v in d.items()} for d in detections[start:start + 3]],
                      [{k: ember.from_numpy(np.asarray(v)) for k, v in t.items()} for t in targets[start:start + 3]])
    assert metric.compute() == mean_average_precision(detections, targets, num_classes=2)


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="2 images"):
        mean_average_precision([{"boxes": np.zeros((0, 4)), "labels": [], "scores": []}] * 2,
                               [{"boxes": np.zeros((0, 4)), "labels": []}])
