"""ember_zoo_yolo.boxes against a plain NumPy reference written pair by pair, and torch-built formulas.

torchvision does not import here, so the reference below is written from the definitions
(one pair of boxes at a time, no broadcasting), and gradients are checked against the
same formulas written in torch.
"""

import math

import numpy as np
import pytest
import torch
from yolo_reference import torch_ciou_loss, torch_giou_loss

import ember
from ember_zoo_yolo import boxes as B

# ---------------------------------------------------------------- NumPy reference, one pair at a time


def ref_area(b):
    return (b[2] - b[0]) * (b[3] - b[1])


def ref_pair(a, b, kind, eps=1e-7):
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = ref_area(a) + ref_area(b) - inter
    iou = inter / union if union != 0 else math.nan
    cx1, cy1, cx2, cy2 = min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])
    if kind == "iou":
        return iou
    if kind == "giou":
        enclosing = (cx2 - cx1) * (cy2 - cy1)
        return iou - (enclosing - union) / enclosing
    centre = ((a[0] + a[2]) / 2 - (b[0] + b[2]) / 2) ** 2 + ((a[1] + a[3]) / 2 - (b[1] + b[3]) / 2) ** 2
    diou = iou - centre / ((cx2 - cx1) ** 2 + (cy2 - cy1) ** 2 + eps)
    if kind == "diou":
        return diou
    v = 4 / math.pi ** 2 * (math.atan((b[2] - b[0]) / (b[3] - b[1])) - math.atan((a[2] - a[0]) / (a[3] - a[1]))) ** 2
    return diou - v / (1 - iou + v + eps) * v


def ref_matrix(boxes1, boxes2, kind):
    return np.array([[ref_pair(a, b, kind) for b in boxes2] for a in boxes1]).reshape(len(boxes1), len(boxes2))


def ref_nms(boxes, scores, threshold):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    keep = []
    for i in order:
        if all(not ref_pair(boxes[i], boxes[k], "iou") > threshold for k in keep):
            keep.append(i)
    return keep


def random_boxes(rng, n, low=0.0, high=50.0):
    corners = rng.uniform(low, high, size=(n, 2))
    return np.concatenate([corners, corners + rng.uniform(1, 20, size=(n, 2))], axis=1)


def E(array, dtype=np.float64):
    return ember.from_numpy(np.asarray(array, dtype=dtype))


# ---------------------------------------------------------------- conversions and areas


@pytest.mark.parametrize("fmt", ["xywh", "cxcywh"])
def test_box_convert_round_trip_and_values(fmt):
    rng = np.random.default_rng(0)
    xyxy = random_boxes(rng, 7)
    converted = B.box_convert(E(xyxy), "xyxy", fmt).numpy()
    x1, y1, x2, y2 = xyxy.T
    expected = (np.stack([x1, y1, x2 - x1, y2 - y1], 1) if fmt == "xywh"
                else np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], 1))
    np.testing.assert_allclose(converted, expected, rtol=1e-12)
    np.testing.assert_allclose(B.box_convert(E(converted), fmt, "xyxy").numpy(), xyxy, rtol=1e-12)
    other = "cxcywh" if fmt == "xywh" else "xywh"
    np.testing.assert_allclose(B.box_convert(B.box_convert(E(xyxy), "xyxy", fmt), fmt, other).numpy(),
                               B.box_convert(E(xyxy), "xyxy", other).numpy(), rtol=1e-12)


def test_box_convert_same_format_copies_and_empty_boxes_keep_shape():
    boxes = E([[1, 2, 3, 4]])
    same = B.box_convert(boxes, "xyxy", "xyxy")
    assert same is not boxes and same.tolist() == boxes.tolist()
    assert tuple(B.box_convert(E(np.zeros((0, 4))), "xyxy", "cxcywh").shape) == (0, 4)


def test_box_convert_errors():
    with pytest.raises(ValueError, match="format"):
        B.box_convert(E([[0, 0, 1, 1]]), "xyxy", "yxyx")
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\)"):
        B.box_convert(E([[0, 0, 1]]), "xyxy", "xywh")
    with pytest.raises(TypeError, match="ember.Tensor"):
        B.box_area(np.zeros((1, 4)))


def test_box_area_matches_reference_and_promotes_integers():
    rng = np.random.default_rng(1)
    xyxy = random_boxes(rng, 9)
    np.testing.assert_allclose(B.box_area(E(xyxy)).numpy(), [ref_area(b) for b in xyxy], rtol=1e-12)
    area = B.box_area(ember.tensor([[0, 0, 3, 5], [2, 2, 2, 9]]))
    assert area.dtype == ember.float32 and area.tolist() == [15.0, 0.0]


# ---------------------------------------------------------------- the IoU family


PAIRWISE = {"iou": B.box_iou, "giou": B.generalized_box_iou, "diou": B.distance_box_iou,
            "ciou": B.complete_box_iou}


@pytest.mark.parametrize("kind", sorted(PAIRWISE))
def test_pairwise_matches_reference(kind):
    rng = np.random.default_rng(2)
    boxes1, boxes2 = random_boxes(rng, 6), random_boxes(rng, 5)
    boxes2[0] = boxes1[0]  # identical pair
    boxes2[1] = [200, 200, 210, 215]  # disjoint from everything
    result = PAIRWISE[kind](E(boxes1), E(boxes2))
    assert tuple(result.shape) == (6, 5) and result.dtype == ember.float64
    np.testing.assert_allclose(result.numpy(), ref_matrix(boxes1, boxes2, kind), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(PAIRWISE))
def test_pairwise_float32_and_empty(kind):
    rng = np.random.default_rng(3)
    boxes1, boxes2 = random_boxes(rng, 4), random_boxes(rng, 3)
    result = PAIRWISE[kind](E(boxes1, np.float32), E(boxes2, np.float32))
    assert result.dtype == ember.float32
    np.testing.assert_allclose(result.numpy(), ref_matrix(boxes1, boxes2, kind), rtol=1e-5, atol=1e-6)
    assert tuple(PAIRWISE[kind](E(np.zeros((0, 4))), E(boxes2)).shape) == (0, 3)
    assert tuple(PAIRWISE[kind](E(boxes1), E(np.zeros((0, 4)))).shape) == (4, 0)


def test_iou_of_zero_area_boxes():
    # a point inside a real box has IoU 0; two identical points are 0 / 0 = nan, as torchvision gives
    point, box = [5.0, 5.0, 5.0, 5.0], [0.0, 0.0, 10.0, 10.0]
    result = B.box_iou(E([point, box]), E([point, box])).numpy()
    assert math.isnan(result[0, 0]) and result[0, 1] == 0 and result[1, 0] == 0 and result[1, 1] == 1


def test_pairwise_rejects_batched_inputs():
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        B.box_iou(E(np.zeros((2, 3, 4))), E(np.zeros((1, 4))))


def test_iou_family_ordering_laws():
    # for any pair: CIoU <= DIoU <= IoU and GIoU <= IoU, each in [-1, 1]
    rng = np.random.default_rng(4)
    boxes1, boxes2 = E(random_boxes(rng, 20)), E(random_boxes(rng, 20))
    iou, giou = B.box_iou(boxes1, boxes2).numpy(), B.generalized_box_iou(boxes1, boxes2).numpy()
    diou, ciou = B.distance_box_iou(boxes1, boxes2).numpy(), B.complete_box_iou(boxes1, boxes2).numpy()
    assert (giou <= iou + 1e-12).all() and (diou <= iou + 1e-12).all() and (ciou <= diou + 1e-12).all()
    assert (giou >= -1).all() and (ciou >= -1.5).all()


# ---------------------------------------------------------------- losses: values vs reference, gradients vs torch


LOSSES = {"giou": (B.generalized_box_iou_loss, torch_giou_loss), "ciou": (B.complete_box_iou_loss, torch_ciou_loss)}


@pytest.mark.parametrize("kind", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_loss_values_and_gradients_match_torch(kind, reduction):
    ours, theirs = LOSSES[kind]
    rng = np.random.default_rng(5)
    pred, target = random_boxes(rng, 8, high=20), random_boxes(rng, 8, high=20)
    pred[0] = target[0]  # a perfect prediction: loss 0
    mine = E(pred).requires_grad_(True)
    loss = ours(mine, E(target), reduction=reduction)
    reference_input = torch.tensor(pred, requires_grad=True)
    per_row = theirs(reference_input, torch.tensor(target))
    reference = {"none": per_row, "mean": per_row.mean(), "sum": per_row.sum()}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), reference.detach().numpy(), rtol=1e-10, atol=1e-12)
    # the reference values themselves, from the pair-by-pair NumPy definitions (eps-free)
    exact = [1 - ref_pair(p, t, kind) for p, t in zip(pred, target)]
    np.testing.assert_allclose(per_row.detach().numpy(), exact, atol=1e-6)
    weights = rng.random(8)
    (loss * E(weights)).sum().backward() if reduction == "none" else loss.backward()
    (reference * torch.tensor(weights)).sum().backward() if reduction == "none" else reference.backward()
    np.testing.assert_allclose(mine.grad.numpy(), reference_input.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(LOSSES))
def test_losses_stay_finite_on_degenerate_boxes(kind):
    ours, _ = LOSSES[kind]
    pred = E([[3.0, 3.0, 3.0, 3.0], [0.0, 0.0, 4.0, 4.0]]).requires_grad_(True)
    target = E([[3.0, 3.0, 3.0, 3.0], [10.0, 10.0, 12.0, 12.0]])
    if kind == "ciou":  # the aspect term's w / h is undefined for zero height: CIoU needs h > 0
        pred, target = pred[1:].detach().requires_grad_(True), target[1:]
    loss = ours(pred, target, reduction="sum")
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(pred.grad.numpy()).all()


def test_loss_empty_mean_is_zero_and_errors():
    empty = E(np.zeros((0, 4))).requires_grad_(True)
    loss = B.generalized_box_iou_loss(empty, E(np.zeros((0, 4))), reduction="mean")
    assert loss.item() == 0.0
    loss.backward()
    with pytest.raises(ValueError, match="reduction"):
        B.complete_box_iou_loss(E([[0, 0, 1, 1]]), E([[0, 0, 1, 1]]), reduction="max")
    with pytest.raises(ValueError, match="shapes must match"):
        B.generalized_box_iou_loss(E([[0, 0, 1, 1]]), E(np.zeros((2, 4))))


# ---------------------------------------------------------------- NMS


def test_nms_matches_reference_on_random_boxes():
    rng = np.random.default_rng(6)
    for threshold in (0.3, 0.5, 0.7):
        boxes, scores = random_boxes(rng, 60, high=30), rng.random(60)
        keep = B.nms(E(boxes, np.float32), E(scores, np.float32), threshold)
        assert keep.dtype == ember.int64
        assert keep.tolist() == ref_nms(boxes.astype(np.float32).astype(np.float64),
                                        scores.astype(np.float32).tolist(), threshold)


def test_nms_ties_keep_input_order_and_threshold_is_strict():
    boxes = E([[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 20], [30, 30, 40, 40]], np.float32)
    scores = E([0.5, 0.5, 0.5, 0.5], np.float32)
    # box 1 duplicates box 0 (IoU 1); box 2 has IoU exactly 0.5 with box 0: kept at threshold 0.5
    assert B.nms(boxes, scores, 0.5).tolist() == [0, 2, 3]
    assert B.nms(boxes, scores, 0.49).tolist() == [0, 3]


def test_nms_empty_and_errors():
    keep = B.nms(E(np.zeros((0, 4))), E(np.zeros(0)), 0.5)
    assert keep.tolist() == [] and keep.dtype == ember.int64
    with pytest.raises(ValueError, match="scores"):
        B.nms(E(np.zeros((3, 4))), E(np.zeros(2)), 0.5)


def test_batched_nms_never_crosses_categories():
    rng = np.random.default_rng(7)
    boxes, scores, idxs = random_boxes(rng, 50, high=25), rng.random(50), rng.integers(0, 3, 50)
    keep = B.batched_nms(E(boxes), E(scores), E(idxs, np.int64), 0.5).tolist()
    expected = []
    for category in range(3):
        members = np.flatnonzero(idxs == category)
        expected += [int(members[k]) for k in ref_nms(boxes[members], scores[members].tolist(), 0.5)]
    assert keep == sorted(expected, key=lambda i: -scores[i])
    # the same boxes in one category suppress each other
    assert len(B.batched_nms(E(boxes), E(scores), E(np.zeros(50), np.int64), 0.5).tolist()) < len(keep)


def test_batched_nms_empty_and_ties():
    assert B.batched_nms(E(np.zeros((0, 4))), E(np.zeros(0)), E(np.zeros(0), np.int64), 0.5).tolist() == []
    boxes = E([[0, 0, 1, 1]] * 3)
    assert B.batched_nms(boxes, E([0.2, 0.2, 0.2]), E([1, 0, 1], np.int64), 0.5).tolist() == [0, 1]
