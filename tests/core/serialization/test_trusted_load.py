"""Saving any picklable object and loading it with weights_only=False, with torch's
semantics: a whole module or NumPy arrays save; the default (weights-only) load refuses
them with PyTorch's guidance; weights_only=False, the caller's explicit trust, loads
them; torch reads ember's files and ember reads torch's the same way."""

import io

import numpy as np
import pytest
import torch

import ember
from ember.serialization import CheckpointError


class Config:
    """A user class saved inside a checkpoint (importable by name, as pickle needs)."""

    def __init__(self, width):
        self.width = width


def _saved(lib, obj):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_whole_module_round_trip():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 1))
    loaded = ember.load(_saved(ember, model), weights_only=False)
    assert type(loaded) is ember.nn.Sequential and repr(loaded) == repr(model)
    x = ember.randn(5, 3)
    assert ember.equal(loaded(x), model(x))
    assert all(type(p) is ember.nn.Parameter and p.requires_grad for p in loaded.parameters())
    loaded(x).sum().backward()  # it trains
    assert loaded[0].weight.grad is not None


def test_numpy_arrays_and_user_objects():
    obj = {"array": np.arange(6.0).reshape(2, 3), "config": Config(7), "weights": ember.ones(2)}
    loaded = ember.load(_saved(ember, obj), weights_only=False)
    np.testing.assert_array_equal(loaded["array"], obj["array"])
    assert isinstance(loaded["config"], Config) and loaded["config"].width == 7
    assert ember.equal(loaded["weights"], obj["weights"])


def test_default_load_refuses_with_guidance_like_torch():
    for lib, error in ((torch, Exception), (ember, CheckpointError)):
        with pytest.raises(error, match="Weights only load failed") as raised:
            lib.load(_saved(lib, {"array": np.arange(3)}))
        assert "weights_only" in str(raised.value) and "trusted source" in str(raised.value)


def test_torch_and_ember_read_each_others_trusted_files():
    obj = {"array": np.arange(4.0), "step": 3, "config": Config(2)}
    from_torch = ember.load(_saved(torch, {**obj, "w": torch.arange(3.0)}), weights_only=False)
    np.testing.assert_array_equal(from_torch["array"], obj["array"])
    assert from_torch["w"].tolist() == [0.0, 1.0, 2.0] and isinstance(from_torch["w"], ember.Tensor)
    from_ember = torch.load(_saved(ember, {**obj, "w": ember.arange(3.0)}), weights_only=False)
    np.testing.assert_array_equal(from_ember["array"], obj["array"])
    assert from_ember["config"].width == 2 and from_ember["w"].tolist() == [0.0, 1.0, 2.0]


def test_weights_only_files_are_unchanged_for_torch():
    state = ember.nn.Linear(2, 2).state_dict()
    loaded = torch.load(_saved(ember, state), weights_only=True)
    assert sorted(loaded) == sorted(state)


def test_safe_globals_allow_listed_classes_load_weights_only_like_torch():
    obj = {"config": Config(5), "w": ember.ones(2)}
    for lib in (torch, ember):
        buffer = _saved(lib, {"config": Config(5), "w": lib.ones(2)})
        with pytest.raises(Exception, match="Weights only load failed"):
            lib.load(buffer)
        buffer.seek(0)
        with lib.serialization.safe_globals([Config]):
            loaded = lib.load(buffer)
        assert loaded["config"].width == obj["config"].width and loaded["w"].tolist() == [1.0, 1.0]
        assert Config not in lib.serialization.get_safe_globals()  # the with block is over
        buffer.seek(0)
        with pytest.raises(Exception, match="Weights only load failed"):
            lib.load(buffer)
    ember.serialization.add_safe_globals([Config])
    try:
        assert ember.load(_saved(ember, obj))["config"].width == 5
    finally:
        ember.serialization.clear_safe_globals()
