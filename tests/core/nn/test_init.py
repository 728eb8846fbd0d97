"""Tests for ember/nn/init.py against torch.nn.init.

Fans, gains and the deterministic initialisers (constant, eye, dirac) are compared
exactly. Random initialisers draw from a different generator than torch's, so their
values differ; they are checked by their distribution: bounds, mean and standard
deviation against torch's formula and against statistics of torch's own samples.
"""

import math
import warnings

import numpy as np
import pytest
import torch
from nn_parity import same_error

import ember
from ember.nn import init

SHAPES = [(7, 5), (16, 3, 3, 3), (8, 4, 5), (2, 3, 2, 2, 2), (30, 1)]


@pytest.fixture(autouse=True)
def seeded():
    """Both generators seeded per test: the statistical checks allow about three
    standard errors, so unseeded they failed now and then, depending on which tests ran
    before them in the same worker."""
    ember.manual_seed(0)
    torch.manual_seed(0)


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None), ("conv_transpose2d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 1), ("selu", None),
])
def test_gains_match_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.calculate_gain("softmax"),
    lambda lib: lib.nn.init.calculate_gain("leaky_relu", "x"),
    lambda lib: lib.nn.init.calculate_gain("leaky_relu", True),
    lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)),
    lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 2), mode="fan_avg"),
    lambda lib: lib.nn.init.eye_(lib.empty(3)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2),
    lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
])
def test_errors_match_torch(call):
    same_error(call)


# --- deterministic initialisers: exact -----------------------------------------------------

@pytest.mark.parametrize("apply", [
    lambda lib, t: lib.nn.init.constant_(t, 0.3),
    lambda lib, t: lib.nn.init.ones_(t),
    lambda lib, t: lib.nn.init.zeros_(t),
])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2)])
def test_constant_initialisers_match_torch(apply, shape):
    ours = apply(ember, ember.empty(shape)).numpy()
    theirs = apply(torch, torch.empty(shape)).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye_matches_torch(shape):
    np.testing.assert_array_equal(init.eye_(ember.empty(shape)).numpy(),
                                  torch.nn.init.eye_(torch.empty(shape)).numpy())


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 2, 3, 3, 1), 2), ((3, 5, 2, 2), 1)])
def test_dirac_matches_torch(shape, groups):
    np.testing.assert_array_equal(init.dirac_(ember.empty(shape), groups=groups).numpy(),
                                  torch.nn.init.dirac_(torch.empty(shape), groups=groups).numpy())


# --- random initialisers: by distribution -----------------------------------------------

def xavier_bound(shape, gain=1.0):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    return gain * math.sqrt(6.0 / (fan_in + fan_out))


def kaiming_std(shape, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    return torch.nn.init.calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


UNIFORM_CASES = [  # (name, kwargs, shape, expected bound from torch's formulas)
    ("uniform_", {"a": -0.5, "b": 1.5}, (200, 100), None),
    ("xavier_uniform_", {}, (200, 100), xavier_bound((200, 100))),
    ("xavier_uniform_", {"gain": 2.0}, (64, 32, 3, 3), xavier_bound((64, 32, 3, 3), 2.0)),
    ("kaiming_uniform_", {}, (200, 100), math.sqrt(3) * kaiming_std((200, 100))),
    ("kaiming_uniform_", {"a": math.sqrt(5)}, (64, 32, 3, 3), math.sqrt(3) * kaiming_std((64, 32, 3, 3), math.sqrt(5))),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}, (100, 300),
     math.sqrt(3) * kaiming_std((100, 300), mode="fan_out", nonlinearity="relu")),
]


@pytest.mark.parametrize("name,kwargs,shape,bound", UNIFORM_CASES)
def test_uniform_initialisers_have_torchs_distribution(name, kwargs, shape, bound):
    ours = getattr(init, name)(ember.empty(shape), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(shape), **kwargs).numpy()
    low, high = (kwargs["a"], kwargs["b"]) if name == "uniform_" else (-bound, bound)
    for sample in (ours, theirs):
        assert low <= sample.min() and sample.max() <= high
        # the extremes of >= 20000 uniform samples come within 0.2% of the bounds
        assert sample.min() < low + 0.002 * (high - low) and sample.max() > high - 0.002 * (high - low)
    np.testing.assert_allclose(ours.mean(), theirs.mean(), atol=0.02 * (high - low))
    np.testing.assert_allclose(ours.std(), (high - low) / math.sqrt(12), rtol=0.02)
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.03)


NORMAL_CASES = [  # (name, kwargs, shape, expected mean and std from torch's formulas)
    ("normal_", {"mean": 1.0, "std": 0.5}, (200, 100), 1.0, 0.5),
    ("xavier_normal_", {}, (200, 100), 0.0, xavier_bound((200, 100)) / math.sqrt(3)),
    ("kaiming_normal_", {}, (64, 32, 3, 3), 0.0, kaiming_std((64, 32, 3, 3))),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, (64, 32, 3, 3), 0.0,
     kaiming_std((64, 32, 3, 3), mode="fan_out", nonlinearity="relu")),
]


@pytest.mark.parametrize("name,kwargs,shape,mean,std", NORMAL_CASES)
def test_normal_initialisers_have_torchs_distribution(name, kwargs, shape, mean, std):
    ours = getattr(init, name)(ember.empty(shape), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(shape), **kwargs).numpy()
    for sample in (ours, theirs):
        np.testing.assert_allclose(sample.mean(), mean, atol=0.03 * std)
        np.testing.assert_allclose(sample.std(), std, rtol=0.03)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 0.2, 0.0, 1.0), (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal_stays_in_bounds_with_torchs_statistics(mean, std, a, b):
    ours = init.trunc_normal_(ember.empty(300, 100), mean, std, a, b).numpy()
    theirs = torch.nn.init.trunc_normal_(torch.empty(300, 100), mean, std, a, b).numpy()
    assert a <= ours.min() and ours.max() <= b
    np.testing.assert_allclose(ours.mean(), theirs.mean(), atol=0.02 * std)
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.03)


def test_trunc_normal_warns_like_torch_when_the_mean_is_far_outside():
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        init.trunc_normal_(ember.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape,gain", [((6, 4), 1.0), ((4, 6), 1.0), ((5, 2, 3), 2.0), ((8, 8), 0.5)])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_gain(shape, gain):
    flat = init.orthogonal_(ember.empty(shape), gain=gain).numpy().reshape(shape[0], -1) / gain
    rows, cols = flat.shape
    product = flat.T @ flat if rows >= cols else flat @ flat.T
    np.testing.assert_allclose(product, np.eye(min(rows, cols)), atol=1e-5)
    theirs = torch.nn.init.orthogonal_(torch.empty(shape), gain=gain).numpy().reshape(shape[0], -1) / gain
    torch_product = theirs.T @ theirs if rows >= cols else theirs @ theirs.T
    np.testing.assert_allclose(product, torch_product, atol=1e-5)


def test_zero_element_tensors_warn_like_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)


# --- generator and no_grad ------------------------------------------------------------

@pytest.mark.parametrize("name", ["uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "xavier_normal_",
                                  "kaiming_uniform_", "kaiming_normal_", "orthogonal_"])
def test_generator_makes_results_reproducible(name):
    def draw(seed):
        return getattr(init, name)(ember.empty(6, 5), generator=ember.Generator().manual_seed(seed)).numpy()
    np.testing.assert_array_equal(draw(3), draw(3))
    assert not np.array_equal(draw(3), draw(4))


@pytest.mark.parametrize("name", ["uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "kaiming_normal_",
                                  "orthogonal_", "ones_", "zeros_", "eye_"])
def test_initialising_a_parameter_records_no_history(name):
    p = ember.nn.Parameter(ember.empty(4, 4))
    out = getattr(init, name)(p)
    assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    (p * 2).sum().backward()
    assert p.grad.tolist() == [[2.0] * 4] * 4


def test_structure_only_builds_the_names_and_shapes_without_drawing():
    ember.manual_seed(0)
    expected = ember.nn.Conv2d(3, 8, 3).weight.detach().numpy().copy()
    ember.manual_seed(0)
    with ember.nn.init.structure_only():
        skeleton = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3), ember.nn.Linear(4, 2))
    assert {k: tuple(v.shape) for k, v in skeleton.state_dict().items()} == {
        "0.weight": (8, 3, 3, 3), "0.bias": (8,), "1.weight": (2, 4), "1.bias": (2,)}
    # Nothing was drawn: the generator's stream continues where manual_seed left it.
    np.testing.assert_array_equal(ember.nn.Conv2d(3, 8, 3).weight.detach().numpy(), expected)
