"""Tests for ember/trainer/callbacks/: the hooks' order, stopping (early stopping, a
non-finite loss), the checkpoints every N epochs, the CSV and TensorBoard curves and the
PNG plot, on the tiny digits model of test_training.py (a few steps each)."""

import csv
import json
import math
import re

import pytest

import ember
import ember.cli
from ember.trainer import training
from ember.trainer.callbacks import (
    AnomalyDetection,
    Callback,
    EarlyStopping,
    GradientNormMonitor,
    LearningRateMonitor,
    ModelCheckpoint,
    PlotCurves,
    StepProfiler,
    TrainerState,
)
from ember.zoo import tasks
from tests.core.trainer.test_training import tiny_model  # noqa: F401 (the autouse fixture: tiny_digits_net)

STEPS = math.ceil(1438 / 64)  # the digits' training split at batch 64


def run(tmp_path, name="run", lines=None, **options):
    log = (lambda line: None) if lines is None else lines.append
    return training.train("tiny_digits_net", "digits", tmp_path / name, progress=False, log=log, **options)


def scored(monkeypatch, scores):
    """The validation accuracy of epoch 1, 2, ... is ``scores``."""
    scores = iter(scores)
    real = tasks.ClassificationTask.evaluate
    monkeypatch.setattr(tasks.ClassificationTask, "evaluate",
                        lambda self, model, loader: dict(real(self, model, loader), accuracy=next(scores)))


class Recorder(Callback):
    def __init__(self, stop_at_step=None):
        self.calls, self.stop_at_step = [], stop_at_step

    def on_train_start(self, trainer):
        self.calls.append(("train_start", len(trainer.history)))

    def on_epoch_start(self, trainer):
        self.calls.append(("epoch_start", trainer.epoch))

    def on_before_optimizer_step(self, trainer, loss):
        assert all(p.grad is not None for p in trainer.model.parameters())
        self.calls.append(("before_step", trainer.batch_index))

    def on_batch_end(self, trainer, loss, step):
        assert isinstance(loss, float) and step == trainer.global_step
        self.calls.append(("batch_end", step))
        if step == self.stop_at_step:
            trainer.should_stop = True  # as in Lightning, without a reason

    def on_validation_end(self, trainer, metrics):
        self.calls.append(("validation_end", sorted(metrics)))

    def on_epoch_end(self, trainer, record):
        self.calls.append(("epoch_end", record["epoch"]))

    def on_train_end(self, trainer):
        self.calls.append(("train_end", len(trainer.history)))


def test_the_hooks_run_in_the_documented_order(tmp_path):
    recorder = Recorder()
    run(tmp_path, epochs=2, train_fraction=0.05, callbacks=[recorder])  # 72 samples: 2 steps an epoch
    epoch = lambda e, first: [("epoch_start", e), ("before_step", 0), ("batch_end", first), ("before_step", 1),  # noqa: E731
                              ("batch_end", first + 1), ("validation_end", ["accuracy", "loss", "samples"]),
                              ("epoch_end", e + 1)]
    assert recorder.calls == [("train_start", 0), *epoch(0, 1), *epoch(1, 3), ("train_end", 2)]


def test_should_stop_set_directly_ends_the_epoch_without_validating_it(tmp_path):
    recorder = Recorder(stop_at_step=STEPS + 2)
    metrics = run(tmp_path, epochs=3, callbacks=[recorder])
    assert [r["epoch"] for r in metrics["epochs"]] == [1]
    assert metrics["stopped"] == {"reason": "a callback set trainer.should_stop", "epoch": 2, "step": STEPS + 2}
    assert ("validation_end", ["accuracy", "loss", "samples"]) in recorder.calls
    assert recorder.calls.count(("epoch_end", 2)) == 0 and recorder.calls[-1] == ("train_end", 1)
    assert ember.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["epoch"] == 1


def test_early_stopping_stops_the_run_with_its_reason_in_the_log_and_metrics_json(tmp_path, monkeypatch):
    scores = [0.5, 0.9, 0.85, 0.9, 0.7, 0.95]
    scored(monkeypatch, scores)
    lines = []
    metrics = run(tmp_path, lines=lines, epochs=6, callbacks=[EarlyStopping("val/accuracy", patience=3)])
    best = scores.index(max(scores[:5]))
    reason = (f"early stopping: val/accuracy did not improve for 3 epochs (best {scores[best]:.4f} at epoch "
              f"{best + 1})")
    assert [r["epoch"] for r in metrics["epochs"]] == [1, 2, 3, 4, 5]  # 0.9 again at epoch 4 is no improvement
    assert reason in lines and lines.index(reason) == lines.index(next(l for l in lines if l.startswith("epoch 5/")))+1
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert on_disk["stopped"] == metrics["stopped"] == {"reason": reason, "epoch": 5, "batch": STEPS - 1,
                                                        "step": 5 * STEPS}
    assert ember.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["epoch"] == 5
    assert ember.load(tmp_path / "run" / "best.pt", weights_only=True)["epoch"] == 2


def test_early_stopping_from_the_cli_and_on_a_loss_with_min_delta(tmp_path, monkeypatch, capsys):
    scored(monkeypatch, [0.5, 0.6, 0.7, 0.8])
    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "4", "--out", str(out), "--no-progress",
                           "--early-stop", "val/accuracy:1", "--early-stop-min-delta", "0.2"]) == 0
    printed = capsys.readouterr().out
    assert "early stopping: val/accuracy did not improve for 1 epoch (best 0.5000 at epoch 1)" in printed
    assert len(json.loads((out / "metrics.json").read_text())["epochs"]) == 2

    stopper = EarlyStopping("val/loss", patience=2, min_delta=0.01)
    trainer = TrainerState(None, None, None, {}, tmp_path, "accuracy", [], 0, 1, print, True, None)
    for epoch, loss in enumerate([1.0, 0.5, 0.495, 0.6], 1):
        stopper.on_epoch_end(trainer, {"epoch": epoch, "val": {"loss": loss}})
        assert trainer.should_stop == (epoch == 4)
    assert stopper.mode == "min" and trainer.stop_reason.endswith("(best 0.5000 at epoch 2)")


def test_early_stopping_carries_over_a_resumed_run(tmp_path, monkeypatch):
    scored(monkeypatch, [0.9, 0.5, 0.5])
    run(tmp_path, epochs=2)
    metrics = run(tmp_path, epochs=5, resume=tmp_path / "run" / "checkpoint.pt",
                  callbacks=[EarlyStopping("val/accuracy", patience=2)])
    assert [r["epoch"] for r in metrics["epochs"]] == [1, 2, 3]
    assert metrics["stopped"]["reason"].endswith("for 2 epochs (best 0.9000 at epoch 1)")


def test_early_stopping_refuses_a_metric_the_run_does_not_report(tmp_path, capsys):
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "2", "--out", str(tmp_path / "run"),
                           "--no-progress", "--early-stop", "val/f2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("ember train: early stopping monitors 'val/f2', which the run does not report; it has "
                       "val/loss, val/accuracy, val/samples, train/loss, lr")


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning",
                            "ignore:invalid value encountered:RuntimeWarning")
def test_a_huge_learning_rate_stops_at_the_first_non_finite_loss_naming_the_step(tmp_path):
    lines = []
    metrics = run(tmp_path, lines=lines, epochs=2, optimizer="sgd", lr=1e30, scheduler="none")
    stopped = metrics["stopped"]
    match = re.fullmatch(r"non-finite loss: the loss is (nan|inf) at epoch 1, batch (\d+) \(step (\d+)\); "
                         r"non-finite gradients: .+; the largest parameter: '(\d.\w+)' \(\|w\| up to (.+)\)",
                         stopped["reason"])
    assert match, stopped["reason"]
    batch = int(match[2])
    assert 0 < batch < STEPS and int(match[3]) == batch + 1 == stopped["step"] + 1 and stopped["batch"] == batch
    assert float(match[5]) > 1e20  # the weights the huge steps made
    assert lines[-1] == stopped["reason"] and metrics["epochs"] == []
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["stopped"] == stopped
    assert not (tmp_path / "run" / "checkpoint.pt").exists()  # no epoch was complete


def poison(monkeypatch, at_call):
    """The ``at_call``-th training batch (from 1) gets a NaN pixel."""
    real = tasks.ClassificationTask.loss
    seen = []

    def poisoned(self, model, batch):
        if model.training:
            seen.append(1)
            if len(seen) == at_call:
                inputs, targets = batch
                inputs = inputs.clone()
                inputs[0, 0, 0, 0] = float("nan")
                batch = (inputs, targets)
        return real(self, model, batch)

    monkeypatch.setattr(tasks.ClassificationTask, "loss", poisoned)


def test_a_poisoned_batch_is_named_with_its_gradients_and_the_step_is_not_taken(tmp_path, monkeypatch):
    poison(monkeypatch, STEPS + 5)  # epoch 2, batch 4
    metrics = run(tmp_path, epochs=3)
    assert metrics["stopped"]["reason"].startswith(
        f"non-finite loss: the loss is nan at epoch 2, batch 4 (step {STEPS + 5}); non-finite gradients: "
        "'1.weight', '1.bias', '3.weight', '3.bias'; the largest parameter: '")
    assert metrics["stopped"] == {"reason": metrics["stopped"]["reason"], "epoch": 2, "batch": 4,
                                  "step": STEPS + 4}
    checkpoint = ember.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)
    assert checkpoint["epoch"] == 1
    assert all(bool(ember.isfinite(p).all()) for p in checkpoint["model"].values())


def test_checkpoint_every_n_epochs_keeps_those_files(tmp_path, capsys):
    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "5", "--out", str(out), "--no-progress",
                           "--checkpoint-every", "2", "--train-fraction", "0.1"]) == 0
    kept = sorted(path.name for path in out.glob("*.pt"))
    assert kept == ["best.pt", "checkpoint.pt", "epoch-0002.pt", "epoch-0004.pt"]
    for number in (2, 4):
        checkpoint = ember.load(out / f"epoch-{number:04d}.pt", weights_only=True)
        assert checkpoint["epoch"] == number and len(checkpoint["history"]) == number
    with pytest.raises(ValueError, match="at least 1"):
        ModelCheckpoint(every_n_epochs=0)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_csv_logger_writes_a_row_per_epoch_and_per_step(tmp_path, capsys):
    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "2", "--out", str(out), "--no-progress",
                           "--log", "csv", "--log-lr", "--log-grad-norm"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    epochs, steps = read_csv(out / "metrics.csv"), read_csv(out / "steps.csv")
    assert [(int(row["epoch"]), int(row["step"])) for row in epochs] == [(1, STEPS), (2, 2 * STEPS)]
    for row, record in zip(epochs, metrics["epochs"]):
        assert float(row["train/loss"]) == pytest.approx(record["train_loss"], rel=1e-12)
        assert float(row["val/accuracy"]) == pytest.approx(record["val"]["accuracy"], rel=1e-12)
        assert float(row["grad_norm_max"]) == pytest.approx(record["grad_norm_max"], rel=1e-12)
    assert [int(row["step"]) for row in steps] == list(range(1, 2 * STEPS + 1))
    assert [int(row["batch"]) for row in steps[:STEPS]] == list(range(STEPS))
    norms = [float(row["grad_norm"]) for row in steps[STEPS:]]
    assert max(norms) == pytest.approx(metrics["epochs"][1]["grad_norm_max"], rel=1e-12)
    assert float(steps[-1]["lr"]) == pytest.approx(metrics["epochs"][1]["lr"], rel=1e-12)  # the cosine recipe
    losses = [float(row["train/loss"]) for row in steps[:STEPS]]
    # (the mean over batches, where the epoch's is over samples: the last batch is smaller)
    assert sum(losses) / STEPS == pytest.approx(metrics["epochs"][0]["train_loss"], rel=0.05)


def test_tensorboard_gets_the_per_step_curves(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from ember.trainer.callbacks import TensorBoardLogger

    class TotalNorm(Callback):  # what clip_grad_norm_ measures, before GradientNormMonitor runs
        norms = []

        def on_before_optimizer_step(self, trainer, loss):
            self.norms.append(float(ember.nn.utils.clip_grad_norm_(trainer.model.parameters(), float("inf"))))

    run(tmp_path, epochs=1, callbacks=[TotalNorm(), TensorBoardLogger(), LearningRateMonitor(),
                                       GradientNormMonitor(per_parameter=True)])
    curves = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    curves.Reload()
    assert [e.step for e in curves.Scalars("lr")] == list(range(1, STEPS + 1))
    assert [e.step for e in curves.Scalars("grad_norm")] == list(range(1, STEPS + 1))
    assert [e.value for e in curves.Scalars("grad_norm")] == pytest.approx(TotalNorm.norms, rel=1e-5)
    parts = [[e.value for e in curves.Scalars(f"grad_norm/{name}")] for name in ("1.weight", "1.bias", "3.weight",
                                                                                "3.bias")]
    assert [math.sqrt(sum(p[i] ** 2 for p in parts)) for i in range(STEPS)] == pytest.approx(TotalNorm.norms,
                                                                                             rel=1e-5)
    assert [e.step for e in curves.Scalars("val/accuracy")] == [1]
    assert [e.step for e in curves.Scalars("epoch/lr")] == [1]


def test_the_plot_is_a_png_of_the_asked_size_with_each_curve(tmp_path):
    from PIL import Image

    from ember.trainer.callbacks.plot import COLOURS

    run(tmp_path, epochs=2, callbacks=[PlotCurves(size=(900, 300))])
    image = Image.open(tmp_path / "run" / "curves.png")
    assert image.format == "PNG" and image.size == (900, 300)
    colours = {colour for _, colour in image.convert("RGB").getcolors(900 * 300)}
    assert {COLOURS[0], COLOURS[1]} <= colours  # train/loss and val/loss, and accuracy and lr in the first


def test_cli_plot_writes_curves_png(tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "1", "--out", str(out), "--no-progress",
                           "--plot"]) == 0
    assert Image.open(out / "curves.png").size == PlotCurves().size


def test_the_profiler_records_three_steps_into_a_trace_and_a_table(tmp_path, capsys):
    out = tmp_path / "cli"
    assert ember.cli.main(["train", "tiny_digits_net", "--epochs", "1", "--out", str(out), "--no-progress",
                           "--profile"]) == 0
    assert f"profiled steps 3-5: {out / 'profile' / 'trace.json'} (chrome://tracing)" in capsys.readouterr().out
    names = [event["name"] for event in json.loads((out / "profile" / "trace.json").read_text())["traceEvents"]]
    assert names.count("aten::linear") == 2 * 3  # two Linear layers, three steps, no validation
    assert names.count("aten::threshold_backward") == 3  # the ReLU's backward: the steps are whole
    assert "aten::linear" in (out / "profile" / "ops.txt").read_text()
    with ember.profiler.profile():  # the run's profile is over (one may record at a time)
        pass


def test_anomaly_mode_names_the_backward_that_made_the_nan_and_is_put_back_after(tmp_path, monkeypatch):
    poison(monkeypatch, 4)  # inside the profiled steps 3-5, too
    with pytest.warns(UserWarning, match="Traceback of forward call that caused the error"):
        with pytest.raises(RuntimeError, match=r"^Function '\w+Backward\d*' returned nan values in its 0th output"):
            run(tmp_path, epochs=1, callbacks=[StepProfiler(), AnomalyDetection()])
    assert not ember.autograd.anomaly_mode.is_anomaly_enabled()
    with ember.profiler.profile():  # on_exception ended the profile the error interrupted
        pass


class Interrupt(Callback):
    """Ctrl-C after the optimizer step ``step``."""

    def __init__(self, step):
        self.step = step

    def on_batch_end(self, trainer, loss, step):
        if step == self.step:
            raise KeyboardInterrupt


def _same_numbers(rows):
    """CSV rows without the columns that time the run."""
    return [{key: value for key, value in row.items() if "seconds" not in key and "per_second" not in key}
            for row in rows]


def _scalars(folder, tag):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curves = EventAccumulator(str(folder / "tensorboard"))
    curves.Reload()
    return [(event.step, event.value) for event in curves.Scalars(tag)]


def test_an_interrupted_run_resumed_without_its_flags_stops_and_logs_as_an_uninterrupted_one(tmp_path, monkeypatch,
                                                                                            capsys):
    """Early stopping counts on from the checkpoint's state (NOTE [ A callback's state in
    the checkpoint ]) and the callbacks come back without their flags (NOTE [ A resumed
    run keeps its callbacks ]): the same stop, the same metrics.json, metrics.csv,
    steps.csv (appended to) and TensorBoard curves (the steps going on)."""
    from ember.trainer import run_config

    flags = ["--epochs", "6", "--train-fraction", "0.05", "--no-progress", "--early-stop", "val/accuracy:2",
             "--early-stop-min-delta", "0.5", "--log", "csv,tensorboard", "--log-lr"]
    whole, interrupted = tmp_path / "whole", tmp_path / "interrupted"  # 2 steps an epoch: stops after epoch 3
    assert ember.cli.main(["train", "tiny_digits_net", "--out", str(whole), *flags]) == 0

    given = run_config.callbacks_from_args
    monkeypatch.setattr(run_config, "callbacks_from_args", lambda args: given(args) + [Interrupt(step=5)])
    assert ember.cli.main(["train", "tiny_digits_net", "--out", str(interrupted), *flags]) == 130  # in epoch 3
    saved = ember.load(interrupted / "checkpoint.pt", weights_only=True)
    assert saved["epoch"] == 2
    early_state = next(state for key, state in saved["callbacks"].items() if key.startswith("EarlyStopping"))
    assert early_state["wait"] == 1 and early_state["best_epoch"] == 1
    monkeypatch.setattr(run_config, "callbacks_from_args", given)
    capsys.readouterr()
    assert ember.cli.main(["train", "tiny_digits_net", "--out", str(interrupted), "--resume", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "resumed from" in printed and "early stopping: val/accuracy did not improve for 2 epochs" in printed

    metrics = [json.loads((folder / "metrics.json").read_text()) for folder in (whole, interrupted)]
    assert metrics[0]["stopped"] == metrics[1]["stopped"] and metrics[0]["stopped"]["epoch"] == 3
    for one, other in zip(*(m["epochs"] for m in metrics), strict=True):
        assert (one["train_loss"], one["val"], one["lr"]) == (other["train_loss"], other["val"], other["lr"])
    for name in ("metrics.csv", "steps.csv"):
        assert _same_numbers(read_csv(whole / name)) == _same_numbers(read_csv(interrupted / name))
    assert [int(row["step"]) for row in read_csv(interrupted / "steps.csv")] == list(range(1, 7))
    for tag in ("lr", "train/loss", "val/accuracy"):
        assert _scalars(whole, tag) == _scalars(interrupted, tag)
    assert [step for step, _ in _scalars(interrupted, "lr")] == list(range(1, 7))


def test_callbacks_give_and_take_their_state_by_key(tmp_path):
    stopper, checkpoint = EarlyStopping("val/loss", patience=4), ModelCheckpoint(every_n_epochs=2)
    assert stopper.state_key == "EarlyStopping{'monitor': 'val/loss', 'mode': 'min'}"
    assert checkpoint.state_key == "ModelCheckpoint{'monitor': None, 'mode': None, 'every_n_epochs': 2}"
    trainer = TrainerState(None, None, None, {}, tmp_path, "accuracy", [], 0, 1, print, False, None)
    checkpoint.on_train_start(trainer)
    for epoch, loss in enumerate([1.0, 0.7, 0.8], 1):
        record = {"epoch": epoch, "val": {"loss": loss, "accuracy": 1 - loss}}
        stopper.on_epoch_end(trainer, record)
        checkpoint.on_epoch_end(trainer, record)
    hooks = ember.trainer.callbacks.CallbackList([stopper, checkpoint, LearningRateMonitor()])
    states = hooks.state_dicts()
    assert states == {stopper.state_key: {"wait": 1, "best": 0.7, "best_epoch": 2, "patience": 4},
                      checkpoint.state_key: {"monitor": "val/accuracy", "mode": "max", "best": 1 - 0.7}}
    other = EarlyStopping("val/accuracy")
    fresh = ember.trainer.callbacks.CallbackList([EarlyStopping("val/loss", patience=4),
                                                  ModelCheckpoint(every_n_epochs=2), other])
    for callback in fresh:
        callback.on_train_start(trainer)
    fresh.load_state_dicts(states)
    assert fresh.state_dicts() == {**states, other.state_key: {"wait": 0, "best": None, "best_epoch": None,
                                                               "patience": 3}}  # no state there: afresh
