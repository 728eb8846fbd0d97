"""Tests for ember/nn/parameter.py against torch.nn.Parameter."""

import copy
import pickle

import numpy as np
import pytest
import torch
from nn_parity import both, error_of

import ember


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameter_is_a_leaf_tensor_and_prints_like_torch(requires_grad):
    def script(lib):
        p = lib.nn.Parameter(lib.tensor([[1.5, -2.0], [0.25, 3.0]]), requires_grad=requires_grad)
        return (isinstance(p, lib.Tensor), p.is_leaf, p.requires_grad, p.grad_fn is None,
                repr(p).replace("torch", "ember"), p.dtype == lib.float32)
    assert both(script)[0] == both(script)[1]


def test_default_parameter_is_an_empty_tensor():
    def script(lib):
        p = lib.nn.Parameter()
        return tuple(p.shape), p.requires_grad, repr(p)
    assert both(script)[0] == both(script)[1]


def test_parameter_shares_memory_with_its_data():
    data = ember.zeros(3)
    p = ember.nn.Parameter(data)
    data.fill_(2.0)
    assert p.tolist() == [2.0, 2.0, 2.0]
    assert data.requires_grad is False  # the wrapped tensor keeps its own flag


def test_ops_on_a_parameter_return_plain_tensors_with_history():
    def script(lib):
        p = lib.nn.Parameter(lib.ones(2))
        y = p * 2
        y.sum().backward()
        return type(y).__name__, type(p.detach()).__name__, type(p.data).__name__, p.grad.tolist()
    assert both(script)[0] == both(script)[1]


def test_integer_parameter_cannot_require_grad():
    ours, theirs = error_of(lambda: ember.nn.Parameter(ember.tensor([1, 2]))), \
        error_of(lambda: torch.nn.Parameter(torch.tensor([1, 2])))
    assert ours[0] == theirs[0]
    p = ember.nn.Parameter(ember.tensor([1, 2]), requires_grad=False)
    assert p.dtype == ember.int64 and not p.requires_grad


def test_parameter_of_a_non_tensor_is_a_type_error():
    # torch 2.13 raises AttributeError ('list' object has no attribute ...); ember says what is wrong.
    with pytest.raises(TypeError, match="data must be a Tensor, got list"):
        ember.nn.Parameter([1.0])


def test_deepcopy_keeps_type_values_flags_and_grad():
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    p.grad = ember.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is ember.nn.Parameter and q is not p
    assert q.tolist() == p.tolist() and q.requires_grad and q.grad.tolist() == [0.5, 0.5]
    q.data.fill_(0.0)
    assert p.tolist() == [1.0, 2.0]
    frozen = copy.deepcopy(ember.nn.Parameter(ember.ones(1), requires_grad=False))
    assert not frozen.requires_grad
    pair = copy.deepcopy([p, p])
    assert pair[0] is pair[1]


def test_pickle_round_trip_keeps_type_and_flag():
    for requires_grad in (True, False):
        p = ember.nn.Parameter(ember.tensor([1.0, -1.0]), requires_grad=requires_grad)
        q = pickle.loads(pickle.dumps(p))
        assert type(q) is ember.nn.Parameter and q.requires_grad == requires_grad and q.tolist() == p.tolist()


def test_to_on_a_parameter_behaves_like_torch():
    def script(lib):
        p = lib.nn.Parameter(lib.ones(2))
        same = p.to(lib.float32)
        converted = p.to(lib.float64)
        return same is p, type(converted).__name__, converted.requires_grad, converted.is_leaf
    assert both(script)[0] == both(script)[1]


def test_module_to_keeps_the_parameter_object():
    m = ember.nn.Module()
    m.p = ember.nn.Parameter(ember.ones(2))
    p = m.p
    m.to(ember.float64)
    assert m.p is p and type(m.p) is ember.nn.Parameter and m.p.dtype == ember.float64 and m.p.requires_grad


def test_parameter_values_match_torch_after_in_place_updates():
    values = np.arange(4, dtype=np.float32)

    def script(lib):
        p = lib.nn.Parameter(lib.tensor(values))
        with lib.no_grad():
            p.mul_(3).add_(1)
        return p.detach().numpy().tolist(), p._version
    ours, theirs = both(script)
    assert ours == theirs
