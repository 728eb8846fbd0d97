"""The detection task through the zoo: registry facts, a few training steps, evaluation, predict's PNG."""

import numpy as np
import pytest
from PIL import Image

import ember
from ember_zoo_yolo.data import collate
from ember_zoo_yolo.draw import draw_detections
from ember_zoo_yolo.task import DetectionTask


@pytest.mark.parametrize("name", ["yolo_nano", "yolo_small"])
def test_registered_facts_match_the_built_model(name):
    info = ember.zoo.model_info(name)
    model = ember.zoo.create_model(name)
    assert info.task == "detection" and info.family == "yolo" and info.default_dataset == "shapes-detect"
    assert info.num_params == sum(p.numel() for p in model.parameters())
    assert isinstance(ember.zoo.get_task(name), DetectionTask)
    assert tuple(info.input_size) == (3, model.image_size, model.image_size) and info.num_classes == model.num_classes


def test_describe_fixes_classes_and_image_size():
    task = DetectionTask()
    train, val = task.datasets("shapes-detect")
    meta = task.describe(train)
    assert meta["model_overrides"] == {"num_classes": 3, "image_size": 64}
    assert meta["classes"] == ["circle", "square", "triangle"]
    assert len(val) == 500


def test_a_few_steps_on_one_batch_lower_the_loss():
    ember.manual_seed(0)
    task = DetectionTask()
    model = ember.zoo.create_model("yolo_nano")
    dataset = ember.data.load_dataset("shapes-detect", num_samples=8)
    batch = collate([dataset[i] for i in range(8)])
    optimizer = ember.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(8):
        loss = task.loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


def test_evaluate_reports_map_and_restores_the_mode():
    task = DetectionTask()
    model = ember.zoo.create_model("yolo_nano")
    model.train()
    dataset = ember.data.load_dataset("shapes-detect", split="test", num_samples=6)
    result = task.evaluate(model, task.loader(dataset, 4, train=False))
    assert model.training and result["samples"] == 6
    assert set(result) == {"loss", "map", "map_50", "map_75", "samples"}
    assert 0 <= result["map"] <= result["map_50"] <= 1


def test_draw_detections_marks_the_box_outline():
    image = ember.zeros(3, 16, 16)
    drawn = np.asarray(draw_detections(image, {"boxes": [[2, 3, 10, 12]], "labels": [1], "scores": [0.9]},
                                       classes=["a", "b"]))
    assert tuple(drawn[3, 5]) == (64, 255, 64)  # top edge, class 1's colour
    assert tuple(drawn[11, 9]) == (64, 255, 64)  # bottom-right corner (exclusive end minus one)
    assert tuple(drawn[7, 6]) == (0, 0, 0)  # inside the box: untouched
    big = draw_detections(image, {"boxes": [[2, 3, 10, 12]], "labels": [0]}, scale=4)
    assert big.size == (64, 64)


def test_predict_writes_a_png_with_the_boxes_drawn(tmp_path):
    # a model whose every score is high, so that predict draws boxes without training
    model = ember.zoo.create_model("yolo_nano")
    with ember.no_grad():
        for level in model.head.levels:
            level.cls_pred.bias.fill_(5.0)
    task = DetectionTask()
    meta = {"classes": ["circle", "square", "triangle"]}
    lines = task.predict(model, "shapes-detect:0-1", meta, out_dir=str(tmp_path))
    assert len(lines) == 2 and "object(s)" in lines[0]
    path = tmp_path / "shapes-detect_0__boxes.png"
    assert str(path) in lines[0]
    drawn = np.asarray(Image.open(path).convert("RGB")).astype(int)
    original = ember.data.load_dataset("shapes-detect", split="val")[0][0].numpy()
    plain = np.repeat(np.repeat((original.transpose(1, 2, 0) * 255).round(), 4, 0), 4, 1)
    changed = np.abs(drawn - plain).sum(-1) > 0
    assert drawn.shape == (256, 256, 3) and 0.001 < changed.mean() < 0.9
    # an image file works too
    source = tmp_path / "input.png"
    Image.fromarray(plain.astype(np.uint8)).save(source)
    assert "input.png" in task.predict(model, str(source), meta, out_dir=str(tmp_path))[0]
    assert (tmp_path / "input_boxes.png").exists()
    with pytest.raises(FileNotFoundError, match="no such input"):
        task.predict(model, str(tmp_path / "missing.png"), meta, out_dir=str(tmp_path))
