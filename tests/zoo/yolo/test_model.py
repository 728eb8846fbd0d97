"""The detector's structure: shapes, anchors, decoding, predict, sizes, errors, gradients."""

import numpy as np
import pytest
import torch

import ember
from ember_zoo_yolo.decode import decode_boxes, make_anchors
from ember_zoo_yolo.model import SIZES, YOLO, yolo_nano, yolo_small


@pytest.fixture(scope="module")
def nano():
    ember.manual_seed(0)
    return yolo_nano()


def test_outputs_cover_both_levels(nano):
    logits, raw = nano(ember.rand(2, 3, 64, 64))
    # 8x8 cells at stride 8 and 4x4 at stride 16
    assert tuple(logits.shape) == (2, 64 + 16, 3) and tuple(raw.shape) == (2, 80, 4)
    model = YOLO(num_classes=5, image_size=128)
    assert tuple(model(ember.rand(1, 3, 128, 128))[0].shape) == (1, 256 + 64, 5)


def test_anchor_points_are_cell_centres_with_their_stride():
    points, strides = make_anchors(32, (8, 16))
    expected_points = [[x + 4, y + 4] for y in (0, 8, 16, 24) for x in (0, 8, 16, 24)]
    expected_points += [[x + 8, y + 8] for y in (0, 16) for x in (0, 16)]
    assert points.tolist() == expected_points
    assert strides.reshape(-1).tolist() == [8.0] * 16 + [16.0] * 4


def test_decode_is_anchor_minus_plus_softplus_distance_times_stride():
    points, strides = make_anchors(32, (8, 16))
    raw = np.random.default_rng(0).normal(size=(2, 20, 4)).astype(np.float32)
    boxes = decode_boxes(ember.from_numpy(raw), points, strides).numpy()
    distances = torch.nn.functional.softplus(torch.from_numpy(raw)).numpy() * strides.numpy()
    expected = np.concatenate([points.numpy() - distances[..., :2], points.numpy() + distances[..., 2:]], -1)
    np.testing.assert_allclose(boxes, expected, rtol=1e-6, atol=1e-5)
    assert (boxes[..., 2:] > boxes[..., :2]).all()  # positive distances: always a valid box


def test_class_bias_starts_at_the_prior(nano):
    for level in nano.head.levels:
        np.testing.assert_allclose(ember.sigmoid(level.cls_pred.bias).detach().numpy(), 0.01, rtol=1e-5)
        assert level.reg_pred.bias.abs().sum().item() == 0


def test_every_parameter_gets_a_gradient(nano):
    logits, raw = nano(ember.rand(2, 3, 64, 64))
    (logits.sum() + nano.decode(raw).sum()).backward()
    missing = [name for name, p in nano.named_parameters() if p.grad is None or not np.isfinite(p.grad.numpy()).all()]
    assert missing == []
    nano.zero_grad()


def test_predict_returns_detections_per_image_and_keeps_the_mode(nano):
    nano.train()
    detections = nano.predict(ember.rand(3, 3, 64, 64), conf_threshold=0.0)
    assert nano.training and len(detections) == 3
    for d in detections:
        assert set(d) == {"boxes", "scores", "labels"}
        assert d["boxes"].shape[1] == 4 and d["labels"].dtype == ember.int64
        assert len(d["scores"]) <= 300 and (d["boxes"].numpy() >= 0).all() and (d["boxes"].numpy() <= 64).all()
        scores = d["scores"].numpy()
        assert (np.diff(scores) <= 0).all()  # best first
    # the untrained scores sit near the 0.01 prior: nothing passes the default 0.25
    assert all(len(d["scores"]) == 0 for d in nano.predict(ember.rand(2, 3, 64, 64)))


def test_sizes_and_overrides():
    small = yolo_small(num_classes=7)
    assert small.num_classes == 7
    assert small.backbone.stem.conv.out_channels == SIZES["yolo_small"][0][0]
    assert sum(p.numel() for p in small.parameters()) > sum(p.numel() for p in yolo_nano().parameters())
    assert yolo_nano(channels=32).head.levels[0].cls_pred.in_channels == 32


def test_parameter_names_follow_the_module_tree(nano):
    names = set(nano.state_dict())
    assert {"backbone.stem.conv.weight", "backbone.stem.bn.running_mean", "backbone.stage2.1.blocks.0.cv1.conv.weight",
            "neck.merge.cv3.bn.weight", "head.levels.1.reg_pred.bias"} <= names


def test_input_errors(nano):
    with pytest.raises(ValueError, match=r"\(B, 3, H, W\)"):
        nano(ember.rand(3, 64, 64))
    with pytest.raises(ValueError, match="64x64"):
        nano(ember.rand(1, 3, 32, 32))
    with pytest.raises(ValueError, match="multiple of"):
        YOLO(image_size=72)
