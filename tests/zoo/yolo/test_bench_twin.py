"""The torch twin in bench/yolo_infer.py computes what ember's detector computes (same weights).

This makes the benchmark an equal comparison, and checks the whole detector (convolutions,
BatchNorm in both modes, SiLU, upsampling, concatenation, decoding) against torch,
forward and backward.
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import torch

import ember
from ember_zoo_yolo.model import SIZES, yolo_nano

_BENCH = pathlib.Path(__file__).resolve().parents[3] / "bench" / "yolo_infer.py"


def _bench_module():
    spec = importlib.util.spec_from_file_location("yolo_infer_bench", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pair():
    bench = _bench_module()
    ember.manual_seed(1)
    ours = yolo_nano()
    # non-trivial BatchNorm statistics and affine parameters, so eval mode is tested too
    with ember.no_grad():
        for name, value in ours.state_dict().items():
            if name.endswith(("running_mean", "bn.bias")):
                value.copy_(ember.randn(value.shape) * 0.1)
            elif name.endswith(("running_var", "bn.weight")):
                value.copy_(ember.rand(value.shape) + 0.5)
    widths, channels, depth = SIZES["yolo_nano"]
    theirs = bench.torch_twin(3, widths, channels, depth).double()
    ours = ours.double()
    bench.load_ember_state(theirs, ours)
    return ours, theirs


def _outputs(model, images, lib):
    logits, raw = model(images)
    return logits, model.decode(raw)


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_forward_and_gradients_match_torch(pair, mode):
    ours, theirs = pair
    ours.train(mode == "train")
    theirs.train(mode == "train")
    images = np.random.default_rng(2).random((4, 3, 64, 64))
    mine = ember.from_numpy(images).requires_grad_(True)
    reference = torch.from_numpy(images).requires_grad_(True)
    ours_out, theirs_out = _outputs(ours, mine, ember), _outputs(theirs, reference, torch)
    for a, b in zip(ours_out, theirs_out):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)
    weights = np.random.default_rng(3).normal(size=(2,))
    (float(weights[0]) * ours_out[0].sum() + float(weights[1]) * ours_out[1].square().mean()).backward()
    (float(weights[0]) * theirs_out[0].sum() + float(weights[1]) * theirs_out[1].square().mean()).backward()
    np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-6, atol=1e-9)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-6, atol=1e-9,
                                   err_msg=name)
    if mode == "train":  # BatchNorm running statistics moved the same way
        theirs_state = theirs.state_dict()
        for name, value in ours.state_dict().items():
            np.testing.assert_allclose(value.numpy(), theirs_state[name].numpy(), rtol=1e-7, atol=1e-9,
                                       err_msg=name)
    ours.zero_grad()
    theirs.zero_grad()


def test_per_op_table_times_the_same_layers_on_both_sides(pair, capsys, monkeypatch):
    """``--per-op``: one JSON line per kind of layer, the decode last, calls as in the network."""
    import json

    monkeypatch.syspath_prepend(str(_BENCH.parent))  # the bench's ``common`` module
    bench = _bench_module()
    ours, theirs = pair
    ours.eval()
    theirs.eval()
    images = np.random.default_rng(4).random((2, 3, 64, 64))
    bench.per_op_table(np, torch, ember, ours, theirs, ember.from_numpy(images), torch.from_numpy(images), rounds=1)
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    calls = {row["layer"]: row["calls"] for row in rows}
    assert calls["SiLU"] == calls["BatchNorm2d"] == 33 and calls["MaxPool2d"] == 3 and calls["Upsample"] == 1
    assert rows[-1]["layer"] == "decode" and all(row["ember ms"] > 0 and row["torch ms"] > 0 for row in rows)
