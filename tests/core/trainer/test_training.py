"""Tests for ember/trainer/training.py and the zoo commands of the CLI (ember/trainer/commands.py),
on a tiny in-process model and the embedded digits (fast)."""

import json
import subprocess
import sys
import types

import numpy as np
import pytest

import ember
import ember.cli
from ember.plugins import hookimpl
from ember.trainer import training
from ember.zoo import tasks


def tiny_digits_net(num_classes=10, in_channels=1):
    return ember.nn.Sequential(ember.nn.Flatten(), ember.nn.Linear(in_channels * 64, 32), ember.nn.ReLU(),
                               ember.nn.Linear(32, num_classes))


RECIPE = {"epochs": 3, "batch_size": 64, "optimizer": "AdamW", "lr": 1e-2, "scheduler": "cosine"}


@pytest.fixture(autouse=True)
def tiny_model():
    plugin = types.ModuleType("zoo_training_test")
    plugin.ember_register_models = hookimpl(lambda register: register(
        tiny_digits_net, name="tiny_digits_net", task="classification", default_dataset="digits",
        recipe=RECIPE, input_size=(1, 8, 8)))
    name = ember.plugins.register(plugin)
    yield
    ember.plugins.unregister(name=name)


def run(tmp_path, name="run", **options):
    return training.train("tiny_digits_net", "digits", tmp_path / name, progress=False, log=lambda line: None,
                          **options)


def test_training_learns_and_writes_checkpoint_and_metrics(tmp_path):
    metrics = run(tmp_path)
    assert [r["epoch"] for r in metrics["epochs"]] == [1, 2, 3]
    assert metrics["epochs"][-1]["train_loss"] < metrics["epochs"][0]["train_loss"]
    assert metrics["final"]["accuracy"] > 0.85 and metrics["final"]["samples"] == 359
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert on_disk["final"] == metrics["final"] and on_disk["config"]["optimizer"] == "AdamW"
    checkpoint = ember.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)
    assert checkpoint["epoch"] == 3 and checkpoint["model_name"] == "tiny_digits_net"
    assert checkpoint["model_overrides"] == {"num_classes": 10, "in_channels": 1}
    assert checkpoint["data"]["classes"] == [str(d) for d in range(10)]


def test_checkpoint_evaluates_to_the_same_metric(tmp_path):
    metrics = run(tmp_path)
    again = training.evaluate("tiny_digits_net", tmp_path / "run" / "checkpoint.pt", "digits")
    assert again["accuracy"] == metrics["final"]["accuracy"]
    assert again["loss"] == pytest.approx(metrics["final"]["loss"], rel=1e-6)


def test_resume_continues_to_the_same_result_as_an_uninterrupted_run(tmp_path, monkeypatch):
    straight = run(tmp_path, "straight")
    original = training.train_one_epoch

    def stop_before_the_last_epoch(task, model, optimizer, scheduler, loader, epoch, config, progress=True, **hooks):
        if epoch == 2:
            raise KeyboardInterrupt
        return original(task, model, optimizer, scheduler, loader, epoch, config, progress, **hooks)

    monkeypatch.setattr(training, "train_one_epoch", stop_before_the_last_epoch)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "split")
    monkeypatch.setattr(training, "train_one_epoch", original)
    resumed = run(tmp_path, "split", resume=tmp_path / "split" / "checkpoint.pt")
    assert [r["epoch"] for r in resumed["epochs"]] == [1, 2, 3]
    assert resumed["final"] == straight["final"]
    a = ember.load(tmp_path / "straight" / "checkpoint.pt", weights_only=True)["model"]
    b = ember.load(tmp_path / "split" / "checkpoint.pt", weights_only=True)["model"]
    for key in a:
        np.testing.assert_array_equal(a[key].numpy(), b[key].numpy(), err_msg=key)


@pytest.mark.parametrize("scheduler", training.SCHEDULERS)
def test_resume_with_more_epochs_stretches_the_schedule(tmp_path, scheduler):
    # Two epochs, then resumed to four: the schedule is re-planned over the new total and
    # carries on from the step the checkpoint reached (torch's schedulers would keep the
    # old horizon, and OneCycleLR would refuse to step past it).
    run(tmp_path, "short", epochs=2, scheduler=scheduler)
    longer = run(tmp_path, "short", epochs=4, scheduler=scheduler,
                 resume=tmp_path / "short" / "checkpoint.pt")
    assert [r["epoch"] for r in longer["epochs"]] == [1, 2, 3, 4]
    state = ember.load(tmp_path / "short" / "checkpoint.pt", weights_only=True)["scheduler"]
    steps = 4 * len(range(0, 1438, 64))  # 1,438 training digits at batch 64
    if scheduler == "none":
        assert state is None
    else:
        assert state["last_epoch"] == steps
    if scheduler == "onecycle":
        assert state["total_steps"] == steps
    if scheduler == "cosine":
        assert state["T_max"] == steps


def test_resume_refuses_another_models_checkpoint(tmp_path):
    ember.save({"model": {}, "model_name": "other", "epoch": 1}, tmp_path / "c.pt")
    with pytest.raises(ValueError, match="checkpoint of 'other'"):
        run(tmp_path, resume=tmp_path / "c.pt")


def test_options_override_the_recipe_and_are_checked():
    config = training.training_config("tiny_digits_net", lr=0.5, epochs=None)
    assert config["lr"] == 0.5 and config["epochs"] == 3 and config["optimizer"] == "AdamW"
    with pytest.raises(ValueError, match="unknown scheduler 'linear'"):
        training.training_config("tiny_digits_net", scheduler="linear")
    params = tiny_digits_net().parameters()
    sgd = training.build_optimizer("sgd", params, dict(config, momentum=0.9, nesterov=True, weight_decay=0.1))
    assert type(sgd).__name__ == "SGD" and sgd.param_groups[0]["nesterov"] is True
    with pytest.raises(ValueError, match="unknown optimizer 'lbfgs2'"):
        training.build_optimizer("lbfgs2", tiny_digits_net().parameters(), config)


def test_cli_train_eval_predict(tmp_path, capsys):
    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--data", "digits", "--epochs", "1", "--out", str(out),
                           "--no-progress", "--lr", "0.01"]) == 0
    printed = capsys.readouterr().out
    assert "epoch 1/1" in printed and "validation accuracy" in printed
    accuracy = json.loads((out / "metrics.json").read_text())["final"]["accuracy"]
    assert ember.cli.main(["eval", "tiny_digits_net", "--weights", str(out / "checkpoint.pt"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == accuracy
    assert ember.cli.main(["predict", "tiny_digits_net", "--weights", str(out / "checkpoint.pt"), "digits:0-2",
                           "--top-k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("digits[0] (true: ")
    assert all(line.count(", ") == 1 for line in lines)  # two classes shown


def test_cli_predict_reads_an_image_file(tmp_path, capsys):
    from PIL import Image

    run(tmp_path)
    image = ember.data.load_dataset("digits", split="test").data[0, 0]
    Image.fromarray((image * 255).astype(np.uint8)).resize((32, 32)).save(tmp_path / "digit.png")
    assert ember.cli.main(["predict", "tiny_digits_net", "--weights", str(tmp_path / "run" / "checkpoint.pt"),
                           str(tmp_path / "digit.png")]) == 0
    assert capsys.readouterr().out.startswith("digit.png: ")


def test_ctrl_c_keeps_the_last_complete_checkpoint(tmp_path, monkeypatch, capsys):
    original = training.train_one_epoch

    def interrupted_in_epoch_two(task, model, optimizer, scheduler, loader, epoch, config, progress=True, **hooks):
        if epoch == 1:
            raise KeyboardInterrupt
        return original(task, model, optimizer, scheduler, loader, epoch, config, progress, **hooks)

    monkeypatch.setattr(training, "train_one_epoch", interrupted_in_epoch_two)
    out = tmp_path / "stopped"
    assert ember.cli.main(["train", "tiny_digits_net", "--out", str(out), "--no-progress"]) == 130
    assert "the last complete checkpoint is" in capsys.readouterr().err
    assert ember.load(out / "checkpoint.pt", weights_only=True)["epoch"] == 1
    monkeypatch.setattr(training, "train_one_epoch", original)
    assert ember.cli.main(["train", "tiny_digits_net", "--out", str(out), "--no-progress", "--resume"]) == 0
    assert ember.load(out / "checkpoint.pt", weights_only=True)["epoch"] == 3


def test_cli_models_table_and_json(capsys):
    assert ember.cli.main(["models", "tiny_digits*"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["name", "task", "params"] and table[1].startswith("tiny_digits_net")
    assert ember.cli.main(["models", "tiny_digits*", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["recipe"] == RECIPE
    assert ember.cli.main(["models", "no_such*"]) == 1


def test_the_progress_bar_shows_loss_and_throughput_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(training, "_is_terminal", lambda stream: True)
    training.train("tiny_digits_net", "digits", tmp_path, epochs=1, log=lambda line: None)
    bar = capsys.readouterr().err
    assert "epoch 1/1" in bar and "loss=" in bar and "rate=" in bar and "/s" in bar


def test_output_to_a_file_has_plain_lines_and_no_bar(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ember.cli", "train", "resnet8_cifar", "--epochs", "1",
                             "--batch-size", "256", "--out", str(tmp_path / "run")],
                            capture_output=True, text=True, timeout=300)  # pipes: not a terminal
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stdout + result.stderr and "batch/s" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("epoch 1/1: train loss ") and lines[2].startswith("validation accuracy")


def test_training_keeps_the_last_and_the_best_checkpoint(tmp_path, monkeypatch):
    scores = iter([0.5, 0.9, 0.7])  # the validation metric of epochs 1, 2, 3
    real = tasks.ClassificationTask.evaluate
    monkeypatch.setattr(tasks.ClassificationTask, "evaluate",
                        lambda self, model, loader: dict(real(self, model, loader), accuracy=next(scores)))
    metrics = run(tmp_path)
    assert metrics["final"]["accuracy"] == 0.7 and metrics["best"]["accuracy"] == 0.9
    assert metrics["best"]["epoch"] == 2 and metrics["best_checkpoint"] == "best.pt"
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert on_disk["best"] == metrics["best"]
    best = ember.load(tmp_path / "run" / "best.pt", weights_only=True)
    last = ember.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)
    assert (best["epoch"], last["epoch"]) == (2, 3)
    assert [r["val"]["accuracy"] for r in best["history"]] == [0.5, 0.9]
    assert not ember.equal(best["model"]["1.weight"], last["model"]["1.weight"])


def test_cli_errors_are_one_line_messages(tmp_path, capsys):
    assert ember.cli.main(["train", "no_such_model", "--out", str(tmp_path)]) == 2
    assert "ember train: no model named 'no_such_model'" in capsys.readouterr().err
    assert ember.cli.main(["eval", "tiny_digits_net", "--weights", str(tmp_path / "missing.pt")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("threads: ") and err[1].startswith("ember eval: no such checkpoint file: ")
    assert "missing.pt" in err[1] and len(err) == 2
    assert ember.cli.main(["train", "tiny_digits_net", "--optimizer", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown optimizer 'nope'" in capsys.readouterr().err


def test_train_log_tensorboard_writes_the_curves(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    assert ember.cli.main(["train", "tiny_digits_net", "--data", "digits", "--epochs", "2", "--out", str(out),
                           "--no-progress", "--log", "tensorboard"]) == 0
    curves = EventAccumulator(str(out / "tensorboard"))
    curves.Reload()
    metrics = json.loads((out / "metrics.json").read_text())
    losses = [(e.step, e.value) for e in curves.Scalars("train/loss")]
    assert losses == [(r["epoch"], pytest.approx(r["train_loss"], rel=1e-6)) for r in metrics["epochs"]]
    assert [e.value for e in curves.Scalars("val/accuracy")] == pytest.approx(
        [r["val"]["accuracy"] for r in metrics["epochs"]], rel=1e-6)
