"""Tests for ember/zoo/compression.py (``ember compress``): pruning, dynamic int8, the checkpoint eval reads."""

import numpy as np
import pytest

import ember
from ember.zoo import compression
from ember.zoo.errors import ZooError


@pytest.fixture
def checkpoint(tmp_path):
    ember.manual_seed(0)
    overrides = {"num_classes": 10, "in_channels": 1}  # what `ember train ... --data digits` records
    model = ember.zoo.create_model("resnet8_cifar", **overrides)
    path = tmp_path / "dense.pt"
    ember.save({"model_name": "resnet8_cifar", "model": model.state_dict(), "model_overrides": overrides,
                "data": {"name": "digits"}}, path)
    return path


def test_prune_and_quantize_write_a_checkpoint_that_create_model_reads(checkpoint, tmp_path):
    lines = []
    rows = compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", prune=0.5,
                                quantize="dynamic", finetune_epochs=0, log=lines.append)
    before, after = dict(rows)["before"], dict(rows)["after"]
    assert after["nonzero"] <= before["nonzero"] - 0.45 * 78042  # half the conv/linear weights are zero
    assert after["parameters"] == before["parameters"]
    assert "accuracy" in lines[0]
    loaded = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "out" / "compressed.pt")
    assert type(loaded.fc).__name__ == "Linear" and type(loaded.fc).__module__.startswith("ember_quantization")
    x = ember.randn(2, 1, 8, 8)
    with ember.no_grad():
        assert loaded.eval()(x).shape == (2, 10)


def test_pruned_weights_stay_zero_through_finetuning(checkpoint, tmp_path):
    compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", prune=0.3, method="ln",
                         finetune_epochs=1, lr=0.01, log=lambda line: None)
    state = ember.load(tmp_path / "out" / "compressed.pt")["model"]
    conv = state["layer1.0.conv1.weight"].numpy()
    zero_channels = (np.abs(conv).reshape(conv.shape[0], -1).sum(1) == 0).sum()
    assert zero_channels == round(0.3 * conv.shape[0])
    assert not any(key.endswith(("_orig", "_mask")) for key in state)  # pruning made permanent


def test_static_int8_of_a_cifar_resnet_is_4x_smaller_on_disk_and_reloads(checkpoint, tmp_path):
    rows = dict(compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", quantize="static",
                                     log=lambda line: None))
    assert type(ember.zoo.create_model("resnet8_cifar", pretrained=checkpoint).layer1[0].conv1).__name__ == "Conv2d"
    dense = tmp_path / "dense_weights.pt"
    ember.save(ember.load(checkpoint)["model"], dense)
    assert dense.stat().st_size / rows["after"]["bytes"] > 3.0
    loaded = ember.zoo.create_model("resnet8_cifar", pretrained=tmp_path / "out" / "compressed.pt").eval()
    assert type(loaded.layer1[0].conv1).__name__ == "Conv2d" and loaded.layer1[0].conv1._relu
    assert loaded(ember.randn(2, 1, 8, 8)).shape == (2, 10)


@pytest.mark.parametrize("kwargs, message", [({"quantize": "qat"}, "QAT of zoo models is not done"),
                                             ({}, "nothing to do"),
                                             ({"prune": 0.5, "method": "l2"}, "unknown pruning method")])
def test_unsupported_requests_are_named(checkpoint, tmp_path, kwargs, message):
    with pytest.raises(ZooError, match=message):
        compression.compress("resnet8_cifar", checkpoint, "digits", tmp_path / "out", finetune_epochs=0,
                             log=lambda line: None, **kwargs)
