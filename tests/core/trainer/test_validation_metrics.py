"""``ember train``/``ember eval --metrics`` (ember/trainer/validation_metrics.py) end to end on
the embedded digits: the reported F1, precision and AUROC equal torchmetrics' on the
checkpoint's own validation logits; an unknown name or a detector is one line."""

import json
import types

import numpy as np
import pytest
import torch
import torchmetrics

import ember
import ember.cli
from ember.plugins import hookimpl
from ember.trainer import training


def tiny_digits_net(num_classes=10, in_channels=1):
    return ember.nn.Sequential(ember.nn.Flatten(), ember.nn.Linear(in_channels * 64, 16), ember.nn.ReLU(),
                               ember.nn.Linear(16, num_classes))


@pytest.fixture(autouse=True)
def tiny_model():
    plugin = types.ModuleType("zoo_metrics_test")
    plugin.ember_register_models = hookimpl(lambda register: register(
        tiny_digits_net, name="tiny_metrics_net", task="classification", default_dataset="digits",
        recipe={"epochs": 1, "batch_size": 64, "lr": 1e-2}, input_size=(1, 8, 8)))
    name = ember.plugins.register(plugin)
    yield
    ember.plugins.unregister(name=name)


def torchmetrics_on_the_validation_split(checkpoint, names):
    """torchmetrics' values of the checkpoint's logits on the digits validation split."""
    model = ember.zoo.create_model("tiny_metrics_net", pretrained=checkpoint).eval()
    _, val_set = ember.zoo.get_task("tiny_metrics_net").datasets("digits")
    inputs = ember.stack([val_set[i][0] for i in range(len(val_set))])
    targets = torch.tensor([int(val_set[i][1]) for i in range(len(val_set))])
    with ember.no_grad():
        logits = torch.from_numpy(model(inputs).numpy())
    classes = {"task": "multiclass", "num_classes": 10}
    made = {"accuracy": torchmetrics.Accuracy(**classes), "f1": torchmetrics.F1Score(**classes, average="macro"),
            "precision": torchmetrics.Precision(**classes, average="macro"),
            "auroc": torchmetrics.AUROC(**classes, average="macro")}
    return {name: float(made[name](logits, targets)) for name in names}


def test_train_and_eval_report_the_metrics_as_torchmetrics_computes_them(tmp_path, capsys):
    out = tmp_path / "run"
    assert ember.cli.main(["train", "tiny_metrics_net", "--data", "digits", "--epochs", "1", "--out", str(out),
                           "--no-progress", "--metrics", "accuracy,f1,precision,auroc"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch 1/1"))
    final = json.loads((out / "metrics.json").read_text())["final"]
    assert f"val f1 {final['f1']:.4f}, val precision {final['precision']:.4f}" in line
    expected = torchmetrics_on_the_validation_split(out / "checkpoint.pt", ["accuracy", "f1", "precision", "auroc"])
    for name, value in expected.items():
        assert final[name] == pytest.approx(value, abs=1e-6), name
    assert final["accuracy"] > 0.5 and 0 < final["f1"] < 1
    assert ember.cli.main(["eval", "tiny_metrics_net", "--weights", str(out / "checkpoint.pt"), "--json",
                           "--metrics", "f1,auroc"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["f1"] == pytest.approx(final["f1"]) and evaluated["auroc"] == pytest.approx(final["auroc"])
    # --resume keeps the run's metrics (they are saved with its config)
    metrics = training.train("tiny_metrics_net", "digits", out, resume=out / "checkpoint.pt", epochs=2,
                             progress=False, log=lambda line: None)
    assert "f1" in metrics["final"] and metrics["config"]["metrics"] == ["accuracy", "f1", "precision", "auroc"]


@pytest.mark.parametrize("command", ["train", "eval"])
def test_an_unknown_metric_is_one_line(tmp_path, capsys, command):
    argv = [command, "tiny_metrics_net", "--metrics", "accuracy,bogus"]
    argv += ["--out", str(tmp_path / "run")] if command == "train" else ["--weights", str(tmp_path / "none.pt")]
    assert ember.cli.main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == (f"ember {command}: unknown metric 'bogus'; choose from accuracy, auroc, average_precision, "
                     "f1, precision, recall")
    assert not (tmp_path / "run").exists()


def test_a_detector_refuses_metrics_in_one_line(tmp_path, capsys):
    assert ember.cli.main(["train", "yolo_nano", "--metrics", "f1", "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == "ember train: --metrics applies to classification models; yolo_nano's detection task reports " \
                    "its own (map, ...)"
    assert not (tmp_path / "run").exists()


def test_the_metrics_a_validation_reports_need_no_plugin_import():
    from ember.trainer.validation_metrics import LazyMetrics

    metrics = LazyMetrics(["f1", "recall"])
    assert metrics.compute() == {}
    # class 2 is predicted once and never true: it counts in the macro means (with 0)
    metrics.update(ember.tensor(np.eye(3, dtype=np.float32)), ember.tensor([0, 1, 1]))
    assert metrics.compute() == {"f1": pytest.approx(5 / 9), "recall": pytest.approx(1.5 / 3)}


def test_validation_metrics_do_not_sync_and_reach_the_ranks():
    from argparse import Namespace

    from ember.trainer import distributed_training
    from ember.trainer.validation_metrics import LazyMetrics

    metrics = LazyMetrics(["f1"])
    metrics.update(ember.tensor(np.eye(3, dtype=np.float32)), ember.tensor([0, 1, 2]))
    assert metrics.metrics["f1"].sync_on_compute is False  # every rank validates on the whole split
    args = ember.cli.build_parser().parse_args(["train", "tiny_metrics_net", "--nproc", "2", "--metrics", "f1,auroc"])
    argv = distributed_training._command_line(Namespace(**vars(args)))
    assert argv[argv.index("--metrics") + 1] == "f1,auroc"
