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


def test_purge_step_hides_what_a_crashed_run_wrote_from_that_step_as_torchs_does(tmp_path):
    """A run writes two curves at steps 0-5 and crashes; the restarted one opens the folder
    with ``purge_step=3`` and writes one curve at 3-4 again: TensorBoard shows both curves
    up to step 2 from the first run, and the one rewritten from the second (a curve
    written again would be cut by its own steps going back; the other needs the purge)."""
    import time

    results = []
    for make_writer in (SummaryWriter, torch_tb.SummaryWriter):
        folder = str(tmp_path / make_writer.__module__)
        with make_writer(folder) as first:
            for step in range(6):
                first.add_scalar("loss", float(step), step)
                first.add_scalar("lr", 0.1 * step, step)
        time.sleep(1.1)  # event files are named by the second they were made in
        with make_writer(folder, purge_step=3) as second:
            for step in (3, 4):
                second.add_scalar("loss", 10.0 + step, step)
        accumulator = EventAccumulator(folder)
        accumulator.Reload()
        results.append(([(s.step, s.value) for s in accumulator.Scalars("loss")],
                        [s.step for s in accumulator.Scalars("lr")]))
    assert results[0] == results[1] == ([(0, 0.0), (1, 1.0), (2, 2.0), (3, 13.0), (4, 14.0)], [0, 1, 2])
