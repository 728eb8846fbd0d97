"""Acceptance runs of the ResNet zoo on the embedded digits: accuracy and time, a
checkpoint that reloads to the same metric, and the CLI end to end (ember train / eval /
predict through ``ember.cli.main``)."""

import json

import pytest

import ember
import ember.cli
from ember.trainer import training
from tests.zoo.child_training import train_in_child


@pytest.mark.slow  # about 6 s of CPU with one BLAS thread
def test_resnet8_cifar_on_digits_reaches_97_percent_within_60_seconds(tmp_path):
    cpu_seconds = train_in_child("resnet8_cifar", "digits", tmp_path)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    accuracy = metrics["final"]["accuracy"]
    assert accuracy >= 0.97, accuracy
    assert cpu_seconds <= 60, cpu_seconds
    # What model_info reports is what this run measures (same recipe and seed).
    recorded = ember.zoo.model_info("resnet8_cifar").measured[0]
    assert recorded["metric"] == "accuracy" and recorded["data"].startswith("digits")
    assert abs(recorded["value"] - accuracy) <= 0.01
    assert recorded["cpu_seconds"] <= 60

    # Save, reload and evaluate: the same metric, through eval and through create_model.
    checkpoint = tmp_path / "checkpoint.pt"
    reloaded = training.evaluate("resnet8_cifar", checkpoint, "digits")
    assert reloaded["accuracy"] == accuracy
    model = ember.zoo.create_model("resnet8_cifar", pretrained=checkpoint)
    task = ember.zoo.get_task("resnet8_cifar")
    _, val = task.datasets("digits")
    assert task.evaluate(model, task.loader(val, 100, train=False))["accuracy"] == accuracy


def test_cli_trains_evaluates_and_predicts_a_resnet_on_digits(tmp_path, capsys):
    out = tmp_path / "run"
    assert ember.cli.main(["train", "resnet8_cifar", "--data", "digits", "--epochs", "1", "--batch-size", "128",
                           "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "resnet8_cifar: 77,754 parameters" in printed and "val accuracy" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["epochs"] == 1 and metrics["config"]["optimizer"] == "SGD"
    assert ember.cli.main(["eval", "resnet8_cifar", "--weights", str(out / "checkpoint.pt")]) == 0
    assert f"accuracy {metrics['final']['accuracy']:.4f}" in capsys.readouterr().out
    assert ember.cli.main(["predict", "resnet8_cifar", "--weights", str(out / "checkpoint.pt"), "digits:0-3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["digits[0]", "digits[1]", "digits[2]", "digits[3]"]


def test_cli_models_lists_the_resnets(capsys):
    assert ember.cli.main(["models", "resnet*_cifar"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if not line.startswith("(")]
    assert names == ["resnet8_cifar", "resnet18_cifar", "resnet20_cifar", "resnet32_cifar", "resnet44_cifar",
                     "resnet56_cifar", "resnet110_cifar"]
