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
    with pytest.raises(ValueError, match=r"multiples of its largest stride \(16\), but got 72x100; pad them to "
                                         r"80x112 \(ember_zoo_yolo.model.pad_to_stride; YOLO.predict does it\)"):
        nano(ember.rand(1, 3, 72, 100))
    with pytest.raises(ValueError, match="multiple of"):
        YOLO(image_size=72)


# --- any input size: anchors per size (cached), training, eval and predict ---------------

@pytest.mark.parametrize("height, width", [(64, 64), (128, 128), (48, 112)])
def test_anchors_are_made_for_each_input_size_and_cached(height, width):
    model = yolo_nano()
    logits, raw = model(ember.rand(1, 3, height, width))
    cells = (height // 8) * (width // 8) + (height // 16) * (width // 16)
    assert tuple(logits.shape) == (1, cells, 3) and model.input_size == (height, width)
    points, strides = model.anchors
    assert points.shape[0] == cells and model.anchors_for((height, width)) is model.anchors_for((height, width))
    # Row-major cell centres: the last anchor of the finest level is its bottom-right cell.
    finest = (height // 8) * (width // 8)
    assert points[finest - 1].tolist() == [width - 4, height - 4] and strides[finest - 1].item() == 8
    assert points[-1].tolist() == [width - 8, height - 8] and strides[-1].item() == 16
    boxes = model.decode(raw)
    assert tuple(boxes.shape) == (1, cells, 4)


def test_anchors_match_the_square_anchors_where_both_apply():
    square, rect = make_anchors(64, (8, 16)), make_anchors((64, 64), (8, 16))
    assert square[0].tolist() == rect[0].tolist() and square[1].tolist() == rect[1].tolist()


def test_predict_pads_an_odd_size_and_clips_to_the_original_image():
    model = yolo_nano()
    image = ember.rand(1, 3, 70, 90)
    detections = model.predict(image, conf_threshold=0.0, max_detections=50)[0]
    assert model.input_size == (80, 96)  # padded to the strides
    boxes = detections["boxes"].numpy()
    assert len(boxes) > 0 and boxes[:, [0, 2]].max() <= 90 and boxes[:, [1, 3]].max() <= 70


@pytest.mark.parametrize("size", [64, 128])
def test_train_step_eval_and_predict_at_a_size(size):
    from ember_zoo_yolo.data import collate

    task = ember.zoo.get_task("yolo_nano")
    dataset = ember.data.load_dataset("shapes-detect", split="train", seed=0, num_samples=4, size=size)
    model = yolo_nano()
    loss = task.loss(model, collate([dataset[i] for i in range(4)]))
    loss.backward()
    assert np.isfinite(loss.item()) and model.head.levels[0].reg_pred.bias.grad is not None
    metrics = task.evaluate(model, task.loader(dataset, batch_size=2, train=False))
    assert metrics["samples"] == 4 and 0.0 <= metrics["map"] <= 1.0
    detections = model.predict(ember.stack([dataset[0][0]]), conf_threshold=0.0, max_detections=5)[0]
    assert detections["boxes"].numpy().max() <= size
