"""default_collate and default_convert against torch's on every supported type."""

import collections

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate as torch_collate
from torch.utils.data import default_convert as torch_convert

import ember
from ember.data import default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])


def _plain(value):
    """Nested structure with every tensor as (NumPy array, dtype name), for comparison."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return ("tensor", value.numpy().tolist(), str(value.dtype).split(".")[-1], tuple(value.shape))
    if isinstance(value, np.ndarray):
        return ("array", value.tolist(), str(value.dtype))
    if isinstance(value, dict):
        return (type(value).__name__, {k: _plain(v) for k, v in value.items()})
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    return (type(value).__name__, value)


def _to(lib, sample):
    """The same sample with ember tensors swapped for torch tensors."""
    if isinstance(sample, ember.Tensor):
        return torch.from_numpy(sample.numpy().copy()) if lib == "torch" else sample
    if isinstance(sample, dict):
        return type(sample)((k, _to(lib, v)) for k, v in sample.items())
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(_to(lib, v) for v in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(_to(lib, v) for v in sample)
    return sample


BATCHES = {
    "ints": [1, 2, 3],
    "floats": [1.5, 2.0],
    "bools": [True, False],
    "strings": ["a", "bc"],
    "bytes": [b"a", b"b"],
    "tensors": [ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])],
    "int tensors": [ember.tensor([[1]]), ember.tensor([[2]])],
    "0-d tensors": [ember.tensor(1.5), ember.tensor(2.5)],
    "arrays": [np.arange(4, dtype=np.float32).reshape(2, 2), np.ones((2, 2), dtype=np.float32)],
    "int arrays": [np.arange(3), np.arange(3, 6)],
    "uint8 arrays": [np.zeros((2, 3), dtype=np.uint8), np.full((2, 3), 255, dtype=np.uint8)],
    "numpy scalars": [np.float32(1.5), np.float32(2.5)],
    "numpy int scalars": [np.int64(3), np.int64(4)],
    "tuples": [(1, "a", 2.0), (2, "b", 3.0)],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"x": ember.tensor([1]), "y": 1}, {"x": ember.tensor([2]), "y": 2}],
    "ordered dicts": [collections.OrderedDict(a=1, b=2.0), collections.OrderedDict(a=3, b=4.0)],
    "namedtuples": [Point(1, ember.tensor([1.0])), Point(2, ember.tensor([2.0]))],
    "nested": [({"img": np.zeros((1, 2), np.float32), "meta": ["m", 1]}, 0),
               ({"img": np.ones((1, 2), np.float32), "meta": ["n", 2]}, 1)],
}


@pytest.mark.parametrize("name", BATCHES)
def test_default_collate_matches_torch(name):
    batch = BATCHES[name]
    assert _plain(default_collate(_to("ember", batch))) == _plain(torch_collate(_to("torch", batch)))


@pytest.mark.parametrize("name", BATCHES)
def test_default_convert_matches_torch(name):
    for sample in BATCHES[name]:
        assert _plain(default_convert(_to("ember", sample))) == _plain(torch_convert(_to("torch", sample)))


def test_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as theirs:
            torch_collate(bad)
        with pytest.raises(TypeError) as ours:
            default_collate(bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([ember.zeros(2), ember.zeros(3)])


def test_collate_keeps_gradients_of_tensors_that_need_them():
    a = ember.tensor([1.0], requires_grad=True)
    out = default_collate([a, a * 2])
    out.sum().backward()
    assert a.grad.tolist() == [3.0]
