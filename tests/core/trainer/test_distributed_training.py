"""Tests for ember/trainer/distributed_training.py: ``ember train --nproc 2`` through ``ember
run`` (rank 0 alone prints and writes; a run resumes on another N), and the global
batch of NOTE [ A run is the same whatever N ]."""

import subprocess
import sys

import ember
from ember.data import TensorDataset
from ember.trainer import distributed_training
from ember.zoo import get_task

TRAIN = [sys.executable, "-m", "ember.cli", "train", "resnet8_cifar", "--data", "digits", "--scheduler", "none",
         "--no-progress", "--threads", "1"]


def ember_train(*args):
    job = subprocess.run([*TRAIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
    return job.stdout


def test_two_ranks_train_and_the_run_resumes_on_one_and_on_two(tmp_path):
    out = tmp_path / "run"
    printed = ember_train("--epochs", 1, "--nproc", 2, "--out", out)
    assert printed.count("epoch 1/1: train loss") == 1  # rank 0 alone reports
    first = ember.load(out / "checkpoint.pt")
    assert first["epoch"] == 1 and not any(k.startswith("module.") for k in first["model"])
    for nproc in (1, 2):
        again = tmp_path / f"again{nproc}"
        again.mkdir()
        (again / "checkpoint.pt").write_bytes((out / "checkpoint.pt").read_bytes())
        printed = ember_train("--epochs", 2, "--nproc", nproc, "--out", again, "--resume")
        assert f"resumed from {again / 'checkpoint.pt'} after epoch 1" in printed
        assert printed.count("epoch 2/2: train loss") == 1
        resumed = ember.load(again / "checkpoint.pt")
        assert resumed["epoch"] == 2 and resumed["history"][0] == first["history"][0]
        assert resumed["history"][1]["train_loss"] < first["history"][0]["train_loss"]


def test_each_epoch_covers_the_data_once_in_global_batches():
    data = TensorDataset(ember.arange(23.0))
    task = get_task("resnet8_cifar")
    single = list(task.loader(data, 6, train=True, seed=11))
    ranks = []
    for rank in range(2):
        world = object.__new__(distributed_training.World)
        world.rank, world.size, world.is_main = rank, 2, rank == 0
        ranks.append([b[0].tolist() for b in world.train_loader(task, data, 6, 0, 11)])
    assert len(ranks[0]) == len(ranks[1]) == len(single)  # steps per epoch do not depend on N
    assert all(len(batch) == 3 for batch in ranks[0][:-1])  # batch 6 over 2 ranks
    seen = [x for rank in ranks for batch in rank for x in batch]
    assert sorted(set(seen)) == list(range(23)) and len(seen) == 24  # one padded sample, as torch pads


def test_the_ranks_get_the_callback_flags_and_a_config_files_values(tmp_path):
    from ember.cli import build_parser
    from ember.trainer import run_config

    (tmp_path / "run.toml").write_text('log = ["csv", "tensorboard"]\nplot = true\ncheckpoint-every = 2\n')
    args = build_parser().parse_args(["train", "resnet8_cifar", "--nproc", "2", "--early-stop", "val/accuracy:2",
                                      "--log-lr", "--config", str(tmp_path / "run.toml")])
    argv = distributed_training._command_line(run_config.apply_config_file(args, args.train_parser))
    again = build_parser().parse_args(argv)
    for option in ("log", "early_stop", "checkpoint_every", "plot", "log_lr", "log_grad_norm", "nproc"):
        assert getattr(again, option) == getattr(args, option), option
    assert again.log == "csv,tensorboard" and again.plot and again.config is None  # (the file was read once)


def test_two_ranks_stop_together_early_and_at_a_non_finite_step(tmp_path):
    # min_delta 100: the loss never "improves" after epoch 1, so both ranks stop after epoch 2
    printed = ember_train("--epochs", 4, "--nproc", 2, "--out", tmp_path / "early", "--train-fraction", 0.1,
                          "--early-stop", "train/loss:1", "--early-stop-min-delta", 100, "--log", "csv")
    assert printed.count("early stopping: train/loss did not improve for 1 epoch") == 1  # rank 0 alone says it
    assert len((tmp_path / "early" / "metrics.csv").read_text().splitlines()) == 1 + 2
    printed = ember_train("--epochs", 2, "--nproc", 2, "--out", tmp_path / "nan", "--train-fraction", 0.1,
                          "--optimizer", "sgd", "--lr", "1e30")
    stops = [line for line in printed.splitlines() if line.startswith("non-finite ")]
    assert len(stops) == 1 and "at epoch 1, batch " in stops[0], printed  # both ranks stopped there
