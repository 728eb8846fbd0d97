"""The same ``ember train`` command with the same seed, run twice as a user runs it (two
fresh processes), gives a bit-identical checkpoint and the same metrics: nothing in
the run depends on timing (NOTE [ Choosing a convolution algorithm ] in
ember/native/convolution/algorithm.py: eager convolutions take a fixed kernel per shape,
where they once timed Winograd against im2col at each shape's first call and two
processes could round differently from the first step on). What a run measures of
itself (seconds, CPU seconds, samples per second) is timing, not a result, and is left
out of the comparison by name."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

COMMAND = ["train", "resnet8_cifar", "--data", "digits", "--epochs", "1", "--seed", "0", "--threads", "1",
           "--train-fraction", "0.25", "--no-progress"]
TIMING = ("seconds", "cpu_seconds", "samples_per_second", "val_seconds", "train_seconds", "train_cpu_seconds")


def _train(out):
    subprocess.run([sys.executable, "-m", "ember.cli", *COMMAND, "--out", str(out)], env=dict(os.environ),
                   check=True, capture_output=True, text=True)
    return ember.load(out / "checkpoint.pt", weights_only=False), json.loads((out / "metrics.json").read_text())


def _split(value, path=""):
    """``({path: tensor}, the rest)`` of a nested checkpoint or metrics value, timing
    fields dropped from the rest."""
    if isinstance(value, ember.Tensor):
        return {path: value}, None
    if isinstance(value, dict):
        tensors, rest = {}, {}
        for key, item in value.items():
            if key in TIMING:
                continue
            found, rest[key] = _split(item, f"{path}/{key}")
            tensors.update(found)
        return tensors, rest
    if isinstance(value, (list, tuple)):
        tensors, rest = {}, []
        for index, item in enumerate(value):
            found, kept = _split(item, f"{path}/{index}")
            tensors.update(found)
            rest.append(kept)
        return tensors, rest
    return {}, value


@pytest.mark.slow  # two short trainings in fresh processes: a few seconds each
def test_two_runs_of_the_same_train_command_give_the_same_checkpoint_and_metrics(tmp_path):
    (first, first_metrics), (second, second_metrics) = _train(tmp_path / "a"), _train(tmp_path / "b")
    tensors, rest = _split(first)
    other_tensors, other_rest = _split(second)
    assert len(tensors) > 50 and tensors.keys() == other_tensors.keys()  # the model, its buffers, the momenta
    differing = [name for name, t in tensors.items()
                 if t.dtype != other_tensors[name].dtype or not np.array_equal(t.numpy(), other_tensors[name].numpy())]
    assert differing == []
    assert rest == other_rest
    assert _split(first_metrics)[1] == _split(second_metrics)[1]
    assert first_metrics["epochs"][0]["train_loss"] == second_metrics["epochs"][0]["train_loss"]
