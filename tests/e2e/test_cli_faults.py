"""What is left of the ``ember`` command's tracebacks: checkpoints of another architecture,
impossible numbers, writes the machine refuses (a read-only or full disk, also in the
middle of a run), ``ember run`` of a script that is not there, and Ctrl-C, alone or on
two ranks. Each ends in one line (two for Ctrl-C on a run: the report, the advice) and
a known exit status (ember/cli.py ``main``, ember/trainer/commands.py, ember/distributed/run.py).
"""

import errno
import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest

import ember
import ember.cli
from ember.distributed import launch_rank
from ember.serialization import atomic
from ember.trainer import training


def lines_of(stderr):
    return [line for line in stderr.splitlines() if not line.startswith("threads: ")]


def one_line(capsys, *argv, status=2):
    code = ember.cli.main([str(arg) for arg in argv])
    _, err = capsys.readouterr()
    lines = lines_of(err)
    assert code == status and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"ember {argv[0]}: ")
    return lines[0]


def console(*argv, timeout=120):
    """``python -m ember.cli ARGV``: the real entry point in a fresh process."""
    return subprocess.run([sys.executable, "-m", "ember.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout)


def yolo_training_checkpoint(path, with_name=True):
    """What ``ember train yolo_nano`` saves, less the optimizer: its builder keywords
    (``image_size``) are not a ResNet's."""
    checkpoint = {"model": ember.zoo.create_model("yolo_nano").state_dict(),
                  "model_overrides": {"num_classes": 3, "image_size": 64},
                  "data": {"name": "shapes-detect", "classes": ["circle", "square", "triangle"]}}
    if with_name:
        checkpoint["model_name"] = "yolo_nano"
    ember.save(checkpoint, path)
    return path


@pytest.mark.parametrize("command", [["eval", "--data", "digits"], ["predict", "digits:0"]])
def test_weights_of_another_architecture(capsys, tmp_path, command):
    path = yolo_training_checkpoint(tmp_path / "yolo.pt")
    name, *rest = command
    line = one_line(capsys, name, "resnet8_cifar", "--weights", path, *rest)
    assert line.endswith(f"{str(path)!r} is a checkpoint of model 'yolo_nano', not 'resnet8_cifar'")
    unnamed = yolo_training_checkpoint(tmp_path / "unnamed.pt", with_name=False)
    line = one_line(capsys, name, "resnet8_cifar", "--weights", unnamed, *rest)
    assert f"{str(unnamed)!r} records builder keywords ['image_size', 'num_classes'] that model 'resnet8_cifar' " \
           "does not take" in line


@pytest.mark.parametrize("argv", [["train", "resnet8_cifar", "--epochs", "-1"],
                                  ["train", "resnet8_cifar", "--epochs", "0"],
                                  ["train", "resnet8_cifar", "--batch-size", "0"],
                                  ["train", "resnet8_cifar", "--workers", "-2"],
                                  ["train", "resnet8_cifar", "--nproc", "0"],
                                  ["train", "resnet8_cifar", "--epochs", "x"],
                                  ["eval", "resnet8_cifar", "--weights", "w.pt", "--batch-size", "-5"],
                                  ["predict", "resnet8_cifar", "--weights", "w.pt", "digits:0", "--top-k", "0"],
                                  ["run", "--nproc-per-node", "0", "script.py"]])
def test_impossible_numbers_are_refused_in_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        ember.cli.main(argv)
    _, err = capsys.readouterr()
    assert exit_.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"ember {argv[0]}: argument ") and "expected a whole number" in err
    assert err.rstrip().endswith(f"(see ember {argv[0]} --help)")


def test_the_console_script_refuses_negative_epochs_in_one_line(tmp_path):
    result = console("train", "resnet8_cifar", "--data", "digits", "--epochs", "-1", "--out", tmp_path / "run")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "--epochs: expected a whole number of at least 1, got -1" in result.stderr
    assert not (tmp_path / "run").exists()


def train_argv(out, epochs=1):
    return ["train", "resnet8_cifar", "--data", "digits", "--epochs", epochs, "--batch-size", 256, "--train-fraction",
            "0.25", "--no-progress", "--out", out]


def test_out_on_a_read_only_file_system(capsys, tmp_path, monkeypatch):
    out = tmp_path / "readonly" / "run"
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *args, **kwargs):
        if str(self).startswith(str(tmp_path / "readonly")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    line = one_line(capsys, *train_argv(out))
    assert line == f"ember train: Read-only file system: {out}"


class FullDisk:
    """``os`` for ember/serialization/atomic.py, whose files stop taking bytes once
    ``allowed`` saves have been written: the disk fills in the middle of a run."""

    def __init__(self, allowed):
        self.allowed = allowed

    def __getattr__(self, name):
        return getattr(os, name)

    def fdopen(self, fd, mode="r"):
        file = os.fdopen(fd, mode)
        if self.allowed > 0:
            self.allowed -= 1
            return file
        return NoSpace(file)


class NoSpace:
    def __init__(self, file):
        self.file = file

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()


def test_a_disk_filling_in_the_middle_of_a_run(capsys, tmp_path, monkeypatch):
    out = tmp_path / "run"
    monkeypatch.setattr(atomic, "os", FullDisk(allowed=3))  # epoch 1: checkpoint.pt, best.pt, metrics.json
    line = one_line(capsys, *train_argv(out, epochs=2))
    assert line == f"ember train: No space left on device: {out / training.CHECKPOINT}"
    monkeypatch.undo()
    assert ember.load(out / training.CHECKPOINT)["epoch"] == 1  # the last complete epoch's file is intact
    assert sorted(p.name for p in out.iterdir()) == [training.BEST, training.CHECKPOINT, training.METRICS]


def test_interrupted_before_the_first_epoch_does_not_advise_resume(capsys, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "train", interrupted)
    status = ember.cli.main([str(arg) for arg in train_argv(tmp_path / "run")])
    lines = lines_of(capsys.readouterr().err)
    assert status == 130 and [line for line in lines if line] == [
        "interrupted before the first epoch ended: nothing was saved (run the command again to start over)"]


@pytest.mark.parametrize("script", ["{tmp}/missing.py", "{tmp}"])
def test_ember_run_of_a_script_that_is_not_there(tmp_path, script):
    script = script.format(tmp=tmp_path)
    result = console("run", "--nproc-per-node", 2, script)
    what = "does not exist" if script.endswith(".py") else "is a folder"
    assert result.returncode == 2 and result.stderr == f"ember run: no script to run: {script!r} {what}\n"


def test_the_signal_forwarder_ignores_a_rank_already_gone():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    launch_rank._forward(child.pid, signal.SIGTERM)  # (os.kill raised ProcessLookupError here)


def interrupt_a_two_rank_run(out, after):
    """``ember train --nproc 2``, sent SIGINT once ``after`` appears on its stdout."""
    argv = [sys.executable, "-m", "ember.cli", *map(str, train_argv(out, epochs=20)), "--nproc", "2"]
    job = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in job.stdout:
        seen.append(line)
        if after in line:
            job.send_signal(signal.SIGINT)
            break
    out_rest, err = job.communicate(timeout=60)
    return job.returncode, "".join(seen) + out_rest, err


def test_ctrl_c_on_two_ranks_is_one_line_advising_resume(tmp_path):
    # (epoch 1 is saved after its line is printed: its checkpoint exists once epoch 2 is)
    status, out, err = interrupt_a_two_rank_run(tmp_path / "run", after="epoch 2/20")
    lines = [line for line in lines_of(err) if line]
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    assert status == 130 and lines == [f"interrupted: the last complete checkpoint is {checkpoint} "
                                       "(continue with --resume)"], err
    assert "mpiexec" not in out + err
    # a data-parallel run's rate is the job's, and per rank
    assert re.search(r"^epoch 1/20: .*, \d+ samples/s in all, \d+ per rank\)$", out, re.M), out


def test_ctrl_c_on_two_ranks_before_the_first_epoch(tmp_path):
    status, out, err = interrupt_a_two_rank_run(tmp_path / "run", after="parameters;")
    lines = [line for line in lines_of(err) if line]
    assert status == 130 and len(lines) == 1 and "--resume" not in err and "Traceback" not in err, err
    assert not (tmp_path / "run").exists()
