"""Tests for ember/trainer/run_config.py: ``ember train --config run.toml`` means the same
as the flags, the command line wins, and a bad file or flag is one line."""

import json

import pytest

import ember.cli
from tests.core.trainer.test_training import tiny_model  # noqa: F401 (the autouse fixture: tiny_digits_net)

FLAGS = ["--epochs", "2", "--batch-size", "128", "--lr", "0.02", "--optimizer", "sgd", "--log", "csv",
         "--early-stop", "val/accuracy:2", "--checkpoint-every", "1", "--plot", "--train-fraction", "0.5"]
FILE = """\
epochs = 2
batch-size = 128
lr = 0.02
optimizer = "sgd"
log = ["csv"]
early_stop = "val/accuracy:2"
checkpoint-every = 1
plot = true
train-fraction = 0.5
"""


def train(*argv):
    return ember.cli.main(["train", "tiny_digits_net", "--no-progress", *map(str, argv)])


def outcome(out):
    metrics = json.loads((out / "metrics.json").read_text())
    for record in metrics["epochs"]:  # (timings differ between runs)
        for key in ("seconds", "cpu_seconds", "samples_per_second", "val_seconds"):
            record.pop(key)
    return metrics["config"], metrics["epochs"], sorted(path.name for path in out.iterdir())


def test_a_config_file_means_the_same_as_its_flags(tmp_path, capsys):
    (tmp_path / "run.toml").write_text(FILE)
    assert train("--out", tmp_path / "flags", *FLAGS) == 0
    assert train("--out", tmp_path / "file", "--config", tmp_path / "run.toml") == 0
    flags, file = outcome(tmp_path / "flags"), outcome(tmp_path / "file")
    assert flags == file
    assert flags[0]["batch_size"] == 128 and flags[0]["optimizer"] == "sgd"
    assert {"curves.png", "metrics.csv", "epoch-0001.pt"} <= set(flags[2])


def test_the_command_line_overrides_the_file(tmp_path, capsys):
    (tmp_path / "run.toml").write_text(FILE)
    assert train("--out", tmp_path / "run", "--config", tmp_path / "run.toml", "--epochs", "1", "--lr", "0.05") == 0
    config, epochs, files = outcome(tmp_path / "run")
    assert len(epochs) == 1 and config["lr"] == 0.05 and config["batch_size"] == 128 and "curves.png" in files


@pytest.mark.parametrize("text, message", [
    ("epoch = 2", "run.toml: unknown key 'epoch' (did you mean 'epochs'?)"),
    ("colour = 'red'", "run.toml: unknown key 'colour'; the keys are the flags of ember train: "),
    ("epochs = 0", "run.toml: epochs: expected a whole number of at least 1, got 0"),
    ("epochs = 'many'", "run.toml: epochs: expected a whole number, got 'many'"),
    ("lr = 'fast'", "run.toml: lr: could not convert string to float: 'fast'"),
    ("plot = 1", "run.toml: plot: expected true or false, got 1"),
    ("log = ['csv', 'wandb']", "run.toml: log: expected a comma-separated list of csv, tensorboard; got 'csv,wandb'"),
    ("early-stop = 'accuracy'", "run.toml: early-stop: expected METRIC[:PATIENCE], e.g. val/accuracy:3"),
    ("early-stop-mode = 'up'", "run.toml: early-stop-mode: expected one of min, max, got 'up'"),
    ("threads = 2", "run.toml: unknown key 'threads'"),
    ("[epochs]\nvalue = 2", "run.toml: epochs: expected a value as its flag takes, got {'value': 2}"),
    ("epochs = ", "run.toml: not valid TOML (Invalid value (at line 1, column 10))"),
])
def test_a_bad_config_file_is_one_line(tmp_path, capsys, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(text + "\n")
    assert train("--out", tmp_path / "run", "--config", "run.toml") == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("threads: ")  # the thread policy's line, then the error
    assert err[1].startswith(f"ember train: {message}")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv, message", [
    (["--early-stop", "val/accuracy:0"], "argument --early-stop: expected METRIC[:PATIENCE]"),
    (["--log", "csv,wandb"], "argument --log: expected a comma-separated list of csv, tensorboard"),
    (["--checkpoint-every", "0"], "argument --checkpoint-every: expected a whole number of at least 1"),
    (["--early-stop-mode", "max"], "--early-stop-mode and --early-stop-min-delta only apply with --early-stop"),
    (["--log-lr"], "--log-lr writes a curve per step: add --log csv or --log tensorboard"),
    (["--config", "missing.toml"], "No such file or directory: missing.toml"),
])
def test_bad_callback_flags_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    try:
        status = train("--out", tmp_path / "run", *argv)
    except SystemExit as exit:  # argparse's own refusals (ember.cli.Parser: one line too)
        status = exit.code
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and len([line for line in err if not line.startswith("threads: ")]) == 1
