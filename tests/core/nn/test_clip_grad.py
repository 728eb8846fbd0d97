"""Tests for ember/nn/utils/clip_grad.py and convert_parameters.py against torch.nn.utils."""

import math

import numpy as np
import pytest
import torch
from nn_parity import same_error

import ember

SHAPES = [(3, 4), (5,), (2, 2, 3), ()]


def make_params(lib, scale=3.0, dtype="float32", shapes=SHAPES, seed=0):
    """Parameters with gradients; the same values for both libraries."""
    rng = np.random.default_rng(seed)
    params = []
    for shape in shapes:
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(dtype)))
        p.grad = lib.tensor((rng.standard_normal(shape) * scale).astype(dtype))
        params.append(p)
    return params


def grads(params):
    return [p.grad.numpy() for p in params]


def assert_close(ours, theirs, dtype="float32"):
    rtol = 1e-6 if dtype == "float32" else 1e-12
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    ours, theirs = make_params(ember, dtype=dtype), make_params(torch, dtype=dtype)
    total = ember.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    torch_total = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, ember.Tensor) and total.ndim == 0
    assert str(total.dtype).split(".")[-1] == str(torch_total.dtype).split(".")[-1]
    assert_close([total.numpy()], [torch_total.numpy()], dtype)
    assert_close(grads(ours), grads(theirs), dtype)


def test_clip_grad_norm_takes_a_single_tensor_a_generator_and_skips_missing_grads():
    ours, theirs = make_params(ember), make_params(torch)
    ours[1].grad = None
    theirs[1].grad = None
    total = ember.nn.utils.clip_grad_norm_((p for p in ours), 1.0)
    torch_total = torch.nn.utils.clip_grad_norm_((p for p in theirs), 1.0)
    assert_close([total.numpy()], [torch_total.numpy()])
    one, torch_one = make_params(ember)[0], make_params(torch)[0]
    assert_close([ember.nn.utils.clip_grad_norm_(one, 1.0, foreach=True).numpy()],
                 [torch.nn.utils.clip_grad_norm_(torch_one, 1.0).numpy()])
    assert_close([one.grad.numpy()], [torch_one.grad.numpy()])


def test_clip_grad_norm_of_no_gradients_is_zero_like_torch():
    ours = ember.nn.utils.clip_grad_norm_([ember.nn.Parameter(ember.ones(2))], 1.0)
    theirs = torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.ones(2))], 1.0)
    assert ours.item() == theirs.item() == 0.0 and ours.ndim == theirs.ndim == 0


@pytest.mark.parametrize("bad_value", [math.nan, math.inf])
def test_non_finite_total_norm(bad_value):
    def clip(lib, error):
        params = make_params(lib)
        with lib.no_grad():
            params[0].grad[0, 0] = bad_value
        return lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=error), params

    same_error(lambda lib: clip(lib, True))
    (total, ours), (torch_total, theirs) = clip(ember, False), clip(torch, False)
    assert np.isnan(total.item()) == np.isnan(torch_total.item())
    np.testing.assert_array_equal(np.isnan(grads(ours)[0]), np.isnan(grads(theirs)[0]))


@pytest.mark.parametrize("clip_value", [0.5, 2, 100.0])
def test_clip_grad_value_matches_torch(clip_value):
    ours, theirs = make_params(ember), make_params(torch)
    assert ember.nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    np.testing.assert_array_equal(np.concatenate([g.ravel() for g in grads(ours)]),
                                  np.concatenate([g.ravel() for g in grads(theirs)]))


def test_parameters_to_vector_and_back_match_torch():
    ours, theirs = make_params(ember), make_params(torch)
    vector = ember.nn.utils.parameters_to_vector(ours)
    torch_vector = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vector.detach().numpy(), torch_vector.detach().numpy())
    assert vector.requires_grad == torch_vector.requires_grad
    (vector * 2).sum().backward()
    new = np.arange(vector.numel(), dtype=np.float32)
    ember.nn.utils.vector_to_parameters(ember.tensor(new), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a.requires_grad and type(a) is ember.nn.Parameter


def test_vector_to_parameters_rejects_a_non_tensor_like_torch():
    same_error(lambda lib: lib.nn.utils.vector_to_parameters([1.0], make_params(lib)))
