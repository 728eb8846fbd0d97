"""torchvision::nms, nms and batched_nms against a plain torch loop (greedy NMS, as
torchvision's CPU kernel): ties, NaN scores, float32/float64, thresholds hit exactly,
empty inputs, both batched_nms strategies, the op in ember's registry, errors."""

import numpy as np
import pytest
import torch

import ember
from ember_vision import ops


def torch_nms(boxes, scores, threshold):
    """Visit by descending score (stable), keep what is not suppressed, suppress the
    later boxes whose IoU with it exceeds the threshold."""
    order = torch.sort(scores, descending=True, stable=True).indices.tolist()
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed, keep = torch.zeros(len(scores), dtype=torch.bool), []
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        later = torch.tensor(order[position + 1:], dtype=torch.long)
        w = (torch.minimum(boxes[i, 2], boxes[later, 2]) - torch.maximum(boxes[i, 0], boxes[later, 0])).clamp(min=0)
        h = (torch.minimum(boxes[i, 3], boxes[later, 3]) - torch.maximum(boxes[i, 1], boxes[later, 1])).clamp(min=0)
        inter = w * h
        iou = inter / (areas[i] + areas[later] - inter)
        suppressed[later[iou.double() > threshold]] = True  # a float IoU against a double threshold, as in C++
    return keep


def torch_batched_nms(boxes, scores, idxs, threshold):
    kept = []
    for c in torch.unique(idxs).tolist():
        members = torch.where(idxs == c)[0]
        kept += [members[k].item() for k in torch_nms(boxes[members], scores[members], threshold)]
    return sorted(kept, key=lambda i: (-scores[i].item(), i))


def clustered_boxes(seed, n, dtype):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 60, size=(n // 4 + 1, 2))[rng.integers(0, n // 4 + 1, size=n)]
    centres += rng.normal(0, 2, size=(n, 2))
    sizes = rng.uniform(4, 12, size=(n, 2))
    boxes = np.concatenate([centres - sizes / 2, centres + sizes / 2], axis=1)
    return boxes.astype(dtype), rng.uniform(size=n).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.9])
def test_nms_against_a_torch_loop(dtype, threshold):
    boxes, scores = clustered_boxes(0, 40, dtype)
    keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), threshold)
    assert keep.dtype == ember.int64
    assert keep.tolist() == torch_nms(torch.from_numpy(boxes), torch.from_numpy(scores), threshold)


def test_ties_keep_input_order_and_nan_scores_come_first():
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30], [20, 20, 30, 30], [40, 40, 50, 50],
                      [0, 0, 10, 10]], dtype=np.float32)
    scores = np.array([0.5, 0.5, 0.7, 0.7, np.nan, np.nan], dtype=np.float32)
    keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), 0.5).tolist()
    assert keep == torch_nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.5) == [4, 5, 2]


def test_an_iou_equal_to_the_threshold_is_kept():
    boxes = ember.tensor([[0.0, 0.0, 2.0, 1.0], [0.0, 0.0, 1.0, 1.0]])  # IoU 0.5 exactly
    scores = ember.tensor([0.9, 0.8])
    assert ops.nms(boxes, scores, 0.5).tolist() == [0, 1]
    assert ops.nms(boxes, scores, 0.49).tolist() == [0]


def test_the_threshold_is_compared_in_float64():
    # The float32 IoU 1/3 is 0.33333334, above the double 1/3: suppressed, as in C++ (a
    # float32 comparison would round the threshold to the same float and keep the box).
    boxes = np.array([[0, 0, 2, 1], [1, 0, 3, 1]], dtype=np.float32)
    scores = np.array([0.9, 0.8], dtype=np.float32)
    keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), 1 / 3).tolist()
    assert keep == torch_nms(torch.from_numpy(boxes), torch.from_numpy(scores), 1 / 3) == [0]
    assert ops.nms(ember.from_numpy(boxes.astype(np.float64)), ember.from_numpy(scores.astype(np.float64)),
                   1 / 3).tolist() == [0, 1]


def test_empty_and_the_registry():
    assert ops.nms(ember.zeros(0, 4), ember.zeros(0), 0.5).tolist() == []
    assert ops.nms(ember.zeros(0, 4), ember.zeros(0), 0.5).dtype == ember.int64
    assert ops.batched_nms(ember.zeros(0, 4), ember.zeros(0), ember.zeros(0, dtype=ember.int64), 0.5).tolist() == []
    boxes, scores = clustered_boxes(1, 10, "float32")
    via_registry = ember.ops.torchvision.nms(ember.from_numpy(boxes), ember.from_numpy(scores), iou_threshold=0.4)
    assert via_registry.tolist() == ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), 0.4).tolist()


@pytest.mark.parametrize("n", [30, 1200])  # 1200 boxes: past 4000 numbers, the per-category loop
def test_batched_nms_both_strategies(n):
    boxes, scores = clustered_boxes(2, n, "float32")
    boxes *= 20 if n > 100 else 1  # the large case spread out, so clusters are not one pile
    idxs = np.random.default_rng(3).integers(0, 4, size=n)
    keep = ops.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores), ember.from_numpy(idxs), 0.5)
    expected = torch_batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(idxs), 0.5)
    assert keep.dtype == ember.int64 and keep.tolist() == expected


def test_errors_as_torchvision():
    boxes, scores = ember.zeros(3, 4), ember.zeros(3)
    with pytest.raises(RuntimeError, match="boxes should be a 2d tensor, got 1D"):
        ops.nms(ember.zeros(4), scores, 0.5)
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 5"):
        ops.nms(ember.zeros(3, 5), scores, 0.5)
    with pytest.raises(RuntimeError, match="scores should be a 1d tensor, got 2D"):
        ops.nms(boxes, ember.zeros(3, 1), 0.5)
    with pytest.raises(RuntimeError, match="should have same number of elements in dimension 0, got 3 and 2"):
        ops.nms(boxes, ember.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="dets should have the same type as scores"):
        ops.nms(boxes, ember.zeros(3, dtype=ember.float64), 0.5)
    with pytest.raises(NotImplementedError, match="\"nms_kernel\" not implemented for 'Long'"):
        ops.nms(boxes.long(), scores.long(), 0.5)
