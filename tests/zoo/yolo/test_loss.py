"""DetectionLoss against the same loss written in torch (NOTE [ Detection loss ]), values and gradients."""

import numpy as np
import pytest
import torch
from yolo_reference import torch_ciou_loss, torch_giou_loss

import ember
from ember_zoo_yolo.assign import assign_batch
from ember_zoo_yolo.decode import decode_boxes, make_anchors
from ember_zoo_yolo.loss import DetectionLoss

ROWS = np.array([[0, 2, 8, 8, 30, 30], [0, 0, 40, 6, 52, 18], [1, 1, 40, 40, 60, 60]], dtype=np.float32)


def torch_reference(logits, raw, points, strides, rows, box_loss, box_gain, cls_gain):
    positive, labels, gt = assign_batch(points.numpy(), strides.numpy().reshape(-1), rows, logits.shape[0])
    distances = torch.nn.functional.softplus(raw) * strides
    boxes = torch.cat([points - distances[..., :2], points + distances[..., 2:]], -1)
    b, a = np.nonzero(positive)
    chosen, matched = boxes[b, a], torch.from_numpy(gt[b, a]).double()
    reference_box = {"ciou": torch_ciou_loss, "giou": torch_giou_loss}[box_loss](chosen, matched).sum()
    with torch.no_grad():  # the class target: IoU of the detached prediction with its truth
        lt = torch.maximum(chosen[:, :2], matched[:, :2])
        rb = torch.minimum(chosen[:, 2:], matched[:, 2:])
        inter = (rb - lt).clamp(min=0).prod(1)
        union = (chosen[:, 2:] - chosen[:, :2]).prod(1) + (matched[:, 2:] - matched[:, :2]).prod(1) - inter
        target = torch.zeros_like(logits)
        target[b, a, labels[b, a]] = inter / union
    cls = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="sum")
    count = max(len(b), 1)
    return box_gain * reference_box / count + cls_gain * cls / count


@pytest.mark.parametrize("box_loss", ["ciou", "giou"])
def test_loss_and_gradients_match_torch(box_loss):
    rng = np.random.default_rng(0)
    points, strides = make_anchors(64, (8, 16))
    logits_np, raw_np = rng.normal(size=(2, 80, 3)), rng.normal(size=(2, 80, 4))
    logits, raw = ember.from_numpy(logits_np).requires_grad_(True), ember.from_numpy(raw_np).requires_grad_(True)
    criterion = DetectionLoss(box_loss=box_loss, box_gain=3.0, cls_gain=0.7)
    total, parts = criterion(logits, decode_boxes(raw, points.double(), strides.double()), ember.from_numpy(ROWS),
                             points, strides)
    t_logits, t_raw = torch.tensor(logits_np, requires_grad=True), torch.tensor(raw_np, requires_grad=True)
    reference = torch_reference(t_logits, t_raw, torch.from_numpy(points.numpy()).double(),
                                torch.from_numpy(strides.numpy()).double(), ROWS, box_loss, 3.0, 0.7)
    np.testing.assert_allclose(total.item(), reference.item(), rtol=1e-9)
    assert total.item() == pytest.approx(3.0 * parts["box"] + 0.7 * parts["cls"])
    total.backward()
    reference.backward()
    np.testing.assert_allclose(logits.grad.numpy(), t_logits.grad.numpy(), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(raw.grad.numpy(), t_raw.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_no_objects_trains_the_background_only():
    points, strides = make_anchors(64, (8, 16))
    logits = ember.zeros(2, 80, 3, requires_grad=True)
    raw = ember.zeros(2, 80, 4, requires_grad=True)
    total, parts = DetectionLoss()(logits, decode_boxes(raw, points, strides), np.zeros((0, 6)), points, strides)
    assert parts["box"] == 0.0
    # every logit targets 0: BCE(0, 0) = log 2 each, divided by max(positives, 1) = 1
    assert total.item() == pytest.approx(2 * 80 * 3 * np.log(2), rel=1e-6)
    total.backward()
    assert raw.grad is None or raw.grad.abs().sum().item() == 0


def test_unknown_box_loss_is_an_error():
    with pytest.raises(ValueError, match="box_loss"):
        DetectionLoss(box_loss="l1")
