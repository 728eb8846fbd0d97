"""Shared helpers for the ember-optim tests: the same parameters and gradients fed to an
ember optimizer and a torch one."""

import numpy as np
import torch

import ember

SHAPES = [(3, 4), (4,), (2, 3, 2)]


def make_params(shapes=SHAPES, dtype="float64", seed=0):
    """``(ember_params, torch_params)``: leaf tensors with equal random values."""
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    mine = [ember.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    return mine, theirs


def set_grads(mine, theirs, rng, skip=()):
    """The same random gradient on both sides (none for the indices in ``skip``)."""
    for i, (m, t) in enumerate(zip(mine, theirs)):
        if i in skip:
            m.grad, t.grad = None, None
            continue
        g = rng.standard_normal(tuple(t.shape)).astype(str(t.dtype).split(".")[-1])
        m.grad, t.grad = ember.tensor(g), torch.tensor(g)


def tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)


def assert_params_equal(mine, theirs, dtype="float64", msg=""):
    for i, (m, t) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), err_msg=f"{msg} param {i}",
                                   **tolerance(dtype))


def to_ember_state_dict(state_dict):
    """A torch optimizer's state dict with its tensors turned into ember tensors."""
    return _convert(state_dict, lambda t: ember.tensor(t.numpy()), torch.Tensor)


def to_torch_state_dict(state_dict):
    """An ember optimizer's state dict with its tensors turned into torch tensors."""
    return _convert(state_dict, lambda t: torch.tensor(t.numpy()), ember.Tensor)


def _convert(value, fn, tensor_type):
    if isinstance(value, tensor_type):
        return fn(value)
    if isinstance(value, dict):
        return {k: _convert(v, fn, tensor_type) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v, fn, tensor_type) for v in value]
    return value


def assert_state_dicts_match(mine, theirs, dtype="float64"):
    """Same structure as torch's (ignoring torch-only group options), same values."""
    assert set(mine["state"]) == set(theirs["state"])
    for key, state in theirs["state"].items():
        assert set(mine["state"][key]) == set(state), key
        for name, value in state.items():
            ours = mine["state"][key][name]
            if isinstance(value, torch.Tensor):
                assert isinstance(ours, ember.Tensor), name
                assert tuple(ours.shape) == tuple(value.shape), name
                assert str(ours.dtype).split(".")[-1] == str(value.dtype).split(".")[-1], name
                np.testing.assert_allclose(ours.numpy(), value.numpy(), err_msg=name, **tolerance(dtype))
            else:
                assert ours == value, name
    assert len(mine["param_groups"]) == len(theirs["param_groups"])
    for group, expected in zip(mine["param_groups"], theirs["param_groups"]):
        for key, value in group.items():
            assert key in expected, f"ember group option {key!r} unknown to torch"
            assert value == expected[key], key
        torch_only = set(expected) - set(group)
        assert torch_only <= TORCH_ONLY_OPTIONS, torch_only


# Options of torch's groups that select an implementation ember does not have.
TORCH_ONLY_OPTIONS = {"foreach", "fused", "differentiable", "capturable"}
