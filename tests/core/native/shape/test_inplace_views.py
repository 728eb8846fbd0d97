"""``t_``, ``transpose_``, ``unsqueeze_``, ``squeeze_`` against torch
(ember/native/shape/inplace_views.py): shape, strides, shared memory, version counter,
gradients through them, and the leaf error."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import make_tensor

CALLS = {
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, -1),
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "unsqueeze_end": lambda t: t.unsqueeze_(-1),
    "squeeze_": lambda t: t.squeeze_(),
    "squeeze_dim": lambda t: t.squeeze_(0),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("shape", [(1, 3), (2, 3), (3,), (1,)])
def test_geometry_memory_and_version_match_torch(name, shape):
    x = make_tensor(shape, "float32")
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x)
        try:
            out = CALLS[name](t)
        except Exception as error:  # e.g. transpose_ of a vector's dims is fine, t_ of 3-d is not
            results.append(type(error))
            continue
        assert out is t
        results.append((tuple(t.shape), t.stride(), t._version, t.numpy().tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["t_", "transpose_", "unsqueeze_", "squeeze_"])
def test_gradients_flow_through_like_torch(name):
    x = make_tensor((1, 3), "float64")
    weights = make_tensor((3, 1), "float64", seed=4)
    grads = []
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        y = leaf * 2
        CALLS[name](y)
        (y.reshape(-1) * lib.tensor(weights).reshape(-1)).sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("name", list(CALLS))
def test_node_names_are_torchs(name):
    names = []
    for lib in (ember, torch):
        y = lib.ones(1, 3, requires_grad=True) * 2
        CALLS[name](y)
        names.append(y.grad_fn.name())
    assert names[0] == names[1]


def test_a_leaf_requiring_grad_is_refused_like_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.ones(2, 3, requires_grad=True).t_()


def test_t_of_three_dims_is_an_error_like_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3, 4).t_()
    with pytest.raises(RuntimeError) as ours:
        ember.ones(2, 3, 4).t_()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("args", [((2, 2), (1, 2)), ((3,), (2,), 1), ((2, 2), (0, 1), 2)])
def test_as_strided_in_place_matches_torch(args):
    results = []
    for lib in (ember, torch):
        t = lib.arange(6.0)
        out = t.as_strided_(*args)
        assert out is t
        results.append((tuple(t.shape), t.stride(), t.storage_offset(), t._version, t.numpy().tolist()))
    assert results[0] == results[1]
