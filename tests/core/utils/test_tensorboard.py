"""ember.utils.tensorboard.SummaryWriter beside torch's: both event files read back by
tensorboard's own EventAccumulator hold the same scalars, histogram statistics, images,
text and hyperparameters."""

import numpy as np
import pytest
import torch.utils.tensorboard as torch_tb
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import ember
from ember.utils.tensorboard import SummaryWriter


def _write(make_writer, directory, lib):
    values = lib.tensor(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
    with make_writer(str(directory)) as writer:
        for step in range(3):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_histogram("weights", values, 0)
        writer.add_image("picture", lib.tensor(np.linspace(0, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)), 0)
        writer.add_text("note", "hello", 0)
    accumulator = EventAccumulator(str(directory), size_guidance={"histograms": 0, "images": 0, "tensors": 0})
    accumulator.Reload()
    return accumulator


def test_the_event_files_read_back_as_torchs(tmp_path):
    import torch

    e = _write(SummaryWriter, tmp_path / "ember", ember)
    t = _write(torch_tb.SummaryWriter, tmp_path / "torch", torch)
    assert [(s.step, s.value) for s in e.Scalars("loss")] == [(s.step, s.value) for s in t.Scalars("loss")]
    eh, th = e.Histograms("weights")[0].histogram_value, t.Histograms("weights")[0].histogram_value
    for field in ("min", "max", "num", "sum"):
        assert getattr(eh, field) == pytest.approx(getattr(th, field), rel=1e-6)
    assert sum(eh.bucket) == sum(th.bucket) == 1000
    ei, ti = e.Images("picture")[0], t.Images("picture")[0]
    assert (ei.width, ei.height) == (ti.width, ti.height) == (5, 4)
    assert e.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello"]


def test_hparams_and_graph(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_hparams({"lr": 0.1, "optimizer": "sgd"}, {"accuracy": 0.9}, run_name="trial")
        writer.add_graph(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()), ember.ones(1, 3))
    trial = EventAccumulator(str(tmp_path / "trial"))
    trial.Reload()
    assert trial.Scalars("accuracy")[0].value == pytest.approx(0.9)
    assert "_hparams_/session_start_info" in trial.Tags()["tensors"] + list(trial.summary_metadata)
    root = EventAccumulator(str(tmp_path))
    root.Reload()
    assert any("addmm" in node.op or "linear" in node.op for node in root.Graph().node)
