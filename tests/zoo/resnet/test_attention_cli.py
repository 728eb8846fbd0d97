"""The attention ResNets through the CLI: ``ember train`` on the embedded digits, ``eval``,
``predict``, and ``predict --explain`` writing each image beside its attention map
(ember/trainer/explain.py); a training checkpoint read by torch.load into the torch model."""

import json

import numpy as np
import pytest
import torch
from PIL import Image
from torch_attention import torch_attention_resnet8

import ember
import ember.cli
from ember.trainer import explain
from tests.zoo.child_training import train_in_child


@pytest.fixture(scope="module", params=["cbam", "se"])  # a gate's own map, and Grad-CAM
def trained(request, tmp_path_factory):
    attention = request.param
    out = tmp_path_factory.mktemp(attention)
    model = f"{attention}_resnet8_cifar"
    assert ember.cli.main(["train", model, "--data", "digits", "--epochs", "1", "--batch-size", "128",
                           "--train-fraction", "0.3", "--out", str(out), "--no-progress", "--threads", "1"]) == 0
    return attention, model, out / "checkpoint.pt"


def test_trained_checkpoint_evaluates_predicts_and_loads_into_torch(trained, capsys):
    attention, model, checkpoint = trained
    capsys.readouterr()
    assert ember.cli.main(["eval", model, "--weights", str(checkpoint), "--threads", "1"]) == 0
    assert "validation" in capsys.readouterr().out
    assert ember.cli.main(["predict", model, "--weights", str(checkpoint), "digits:0-3", "--threads", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["digits[0]", "digits[1]", "digits[2]", "digits[3]"]

    # The checkpoint's state dict, read by torch.load, fits the torch model key for key.
    reference = torch_attention_resnet8(attention)
    reference.load_state_dict(torch.load(checkpoint, weights_only=True)["model"])
    reference.eval()
    ours = ember.zoo.create_model(model, pretrained=str(checkpoint)).eval()
    x = np.random.default_rng(0).random((4, 1, 8, 8), dtype=np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(ember.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-5)


def test_explain_writes_each_image_beside_its_map(trained, tmp_path, capsys):
    attention, model, checkpoint = trained
    path = tmp_path / "maps.png"
    capsys.readouterr()
    assert ember.cli.main(["predict", model, "--weights", str(checkpoint), "digits:0-2", "--explain", str(path),
                           "--threads", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 4 and printed[-1].startswith("attention maps (") and printed[-1].endswith(str(path))
    assert ("Grad-CAM" in printed[-1]) == (attention == "se")

    picture = np.asarray(Image.open(path))
    scale = -(-explain.TILE // 8)  # the 8x8 digits, scaled up by a whole factor to TILE pixels or more
    tile = 8 * scale
    assert picture.shape == (3 * tile + 4 * explain.GAP, 2 * tile + 3 * explain.GAP, 3)
    # Each row: the digit (grey), then its map in the heat scale, from the model's own maps.
    _, val = ember.zoo.get_task(model).datasets("digits")
    images = ember.stack([val[i][0] for i in range(3)])
    maps, _ = ember.zoo.create_model(model, pretrained=str(checkpoint)).eval().attention_maps(images)
    for row in range(3):
        top = explain.GAP + row * (tile + explain.GAP)
        image_tile = picture[top:top + tile, explain.GAP:explain.GAP + tile]
        map_tile = picture[top:top + tile, 2 * explain.GAP + tile:2 * explain.GAP + 2 * tile]
        grey = np.round(images[row, 0].numpy() * 255).astype(np.uint8)
        np.testing.assert_array_equal(image_tile[::scale, ::scale, 0], grey)
        np.testing.assert_array_equal(image_tile[..., 1], image_tile[..., 2])
        heat = np.round(explain.heat(maps[row, 0].numpy()) * 255).astype(np.uint8)
        np.testing.assert_array_equal(map_tile[::scale, ::scale], heat)


def test_explain_on_a_model_without_attention_is_one_line(tmp_path, capsys):
    weights = tmp_path / "plain.pt"
    ember.save(ember.zoo.create_model("resnet8_cifar").state_dict(), weights)
    path = tmp_path / "maps.png"
    assert ember.cli.main(["predict", "resnet8_cifar", "--weights", str(weights), "shapes:0", "--explain",
                           str(path), "--threads", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not path.exists()
    error = captured.err.strip().splitlines()[-1]
    assert error == ("ember predict: 'resnet8_cifar' has no attention maps to draw; --explain needs a model that "
                     "defines attention_maps (the zoo's se_, cbam_, eca_ and ca_resnet8_cifar)")


def test_explain_on_a_model_that_is_not_an_image_classifier_is_one_line(tmp_path, capsys):
    assert ember.cli.main(["predict", "yolo_nano", "--weights", str(tmp_path / "none.pt"), "shapes-detect:0",
                           "--explain", str(tmp_path / "maps.png"), "--threads", "1"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == "ember predict: --explain draws attention maps of image classifiers; 'yolo_nano' is a detection " \
                    "model"


def test_explain_into_a_missing_folder_is_one_line(trained, tmp_path, capsys):
    _, model, checkpoint = trained
    assert ember.cli.main(["predict", model, "--weights", str(checkpoint), "digits:0", "--explain",
                           str(tmp_path / "no" / "maps.png"), "--threads", "1"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 2 and error[-1].startswith("ember predict: No such file or directory")  # (1: threads)


@pytest.mark.slow  # about 30 s: validating on the 1,000 32x32 images dominates
def test_an_attention_resnet_trains_on_the_embedded_shapes(tmp_path, capsys):
    # (the CIFAR-like 32x32 RGB data: the gates see a 32x32 map in the first stage)
    out = tmp_path / "run"
    assert ember.cli.main(["train", "ca_resnet8_cifar", "--data", "shapes", "--epochs", "1", "--batch-size", "100",
                           "--train-fraction", "0.05", "--out", str(out), "--no-progress", "--threads", "1"]) == 0
    assert "val accuracy" in capsys.readouterr().out
    model = ember.zoo.create_model("ca_resnet8_cifar", pretrained=str(out / "checkpoint.pt"))
    assert model.fc.out_features == 3 and model.conv1.in_channels == 3
    maps, _ = model.eval().attention_maps(ember.rand(2, 3, 32, 32))
    assert maps.shape == (2, 1, 32, 32)


@pytest.mark.slow  # about 8 s of CPU each with one BLAS thread
@pytest.mark.parametrize("attention", ["se", "cbam", "eca", "ca"])
def test_attention_resnet8_on_digits_reaches_its_measured_accuracy(attention, tmp_path):
    model = f"{attention}_resnet8_cifar"
    cpu_seconds = train_in_child(model, "digits", tmp_path)
    best = json.loads((tmp_path / "metrics.json").read_text())["best"]
    recorded = ember.zoo.model_info(model).measured[0]
    assert best["accuracy"] >= 0.97, best
    assert recorded["data"].startswith("digits") and abs(recorded["value"] - best["accuracy"]) <= 0.01
    assert cpu_seconds <= 60, cpu_seconds
