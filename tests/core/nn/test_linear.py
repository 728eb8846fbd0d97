"""nn.Linear, nn.Bilinear, nn.Identity, nn.Flatten and nn.Unflatten against torch:
copied weights, outputs, input and parameter gradients in float32 and float64,
initialisation bounds, repr, parameter names, registry lookup and errors."""

import math

import numpy as np
import pytest
import torch
from module_parity import check_module, same_error, same_structure

import ember
from ember.testing import make_tensor

FLOATS = ["float32", "float64"]


def both(name, *args, **kwargs):
    return getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


# --- Linear ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_module(dtype, shape, bias):
    check_module(*both("Linear", 3, 4, bias=bias), make_tensor(shape, dtype), dtype=dtype, atol=1e-5)


def test_linear_noncontiguous_input():
    x = make_tensor((3, 2, 6))
    e, t = both("Linear", 3, 4)
    check_module(e, t, x[:, :, ::2], atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_structure(bias):
    same_structure(*both("Linear", 3, 4, bias=bias))
    m = ember.nn.Linear(3, 4, bias=bias)
    assert (m.in_features, m.out_features) == (3, 4)
    assert (m.bias is None) is (not bias)


def test_linear_init_bounds():
    # torch's rule: kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); same for the bias.
    ember.manual_seed(0)
    m = ember.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p in (m.weight, m.bias):
        values = p.detach().numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.95 * bound  # spread over the whole interval
        assert abs(values.mean()) < 0.1 * bound
    t = torch.nn.Linear(400, 300)
    assert np.isclose(np.abs(m.weight.detach().numpy()).std(), np.abs(t.weight.detach().numpy()).std(), rtol=0.05)
    assert m.weight.requires_grad and m.weight.is_leaf


def test_linear_dtype_argument():
    m = ember.nn.Linear(3, 4, dtype=ember.float64)
    assert m.weight.dtype is ember.float64 and m.bias.dtype is ember.float64


def test_linear_zero_in_features():
    e, t = both("Linear", 0, 4)
    assert np.all(e.bias.detach().numpy() == 0) and np.all(t.bias.detach().numpy() == 0)
    check_module(e, t, make_tensor((2, 0)))


def test_linear_input_errors():
    same_error(lambda lib: lib.nn.Linear(3, 4)(lib.ones(2, 5)))
    same_error(lambda lib: lib.nn.Linear(3, 4)(lib.ones(2, 3, dtype=lib.float64)))


def test_linear_resolves_by_name():
    assert ember.nn.Linear is ember.nn.create("Linear", in_features=2, out_features=3).__class__
    assert isinstance(ember.nn.Linear(2, 3), ember.nn.Module)


def test_linear_trains_like_torch():
    """Three SGD steps on both sides stay together (forward, backward and update)."""
    e, t = both("Linear", 3, 2)
    x, target = make_tensor((8, 3)), make_tensor((8, 2), seed=1)
    from module_parity import copy_torch_state

    copy_torch_state(e, t)
    for lib, m in ((ember, e), (torch, t)):
        for _ in range(3):
            loss = ((m(lib.tensor(x)) - lib.tensor(target)) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in m.parameters():
                    p.sub_(p.grad * 0.1)
                    p.grad = None
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- Bilinear -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(5,), (), (2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module(dtype, batch, bias):
    e, t = both("Bilinear", 3, 4, 2, bias=bias)
    check_module(e, t, make_tensor(batch + (3,), dtype), make_tensor(batch + (4,), dtype, seed=1), dtype=dtype,
                 atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_structure(bias):
    same_structure(*both("Bilinear", 3, 4, 2, bias=bias))


def test_bilinear_init_bounds():
    ember.manual_seed(0)
    m = ember.nn.Bilinear(100, 4, 50)
    bound = 1 / math.sqrt(100)
    for p in (m.weight, m.bias):
        values = np.abs(p.detach().numpy())
        assert values.max() <= bound and values.max() > 0.8 * bound


def test_bilinear_input_errors():
    same_error(lambda lib: lib.nn.Bilinear(3, 4, 2)(lib.ones(2, 3), lib.ones(3, 4)))
    same_error(lambda lib: lib.nn.Bilinear(3, 4, 2)(lib.ones(2, 4), lib.ones(2, 4)))


# --- Identity, Flatten, Unflatten -----------------------------------------------------


def test_identity():
    e, t = both("Identity", 54, unused_argument=True)
    same_structure(e, t)
    x = ember.ones(2, 3)
    assert e(x) is x


@pytest.mark.parametrize("args, shape", [((), (2, 3, 4, 5)), ((0,), (2, 3, 4)), ((1, 2), (2, 3, 4, 5)),
                                         ((-3, -2), (2, 3, 4, 5)), ((0,), (2,)), ((2, -1), (2, 3, 4, 5))])
def test_flatten(args, shape):
    e, t = both("Flatten", *args)
    same_structure(e, t)
    check_module(e, t, make_tensor(shape))


def test_flatten_errors():
    same_error(lambda lib: lib.nn.Flatten(2, 1)(lib.ones(2, 3, 4)))
    same_error(lambda lib: lib.nn.Flatten(0, 5)(lib.ones(2, 3, 4)))
    same_error(lambda lib: lib.nn.Flatten()(lib.ones(2)))


@pytest.mark.parametrize("dim, sizes, shape", [(1, (2, 5, 5), (2, 50)), (-1, [2, -1], (3, 8)),
                                               (0, (1, 2), (2, 3)), (1, ember.Size([2, 2]), (1, 4, 1))])
def test_unflatten(dim, sizes, shape):
    torch_sizes = torch.Size(list(sizes)) if isinstance(sizes, ember.Size) else sizes
    e, t = ember.nn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, torch_sizes)
    assert repr(e) == repr(t).replace("torch.Size", "ember.Size")
    check_module(e, t, make_tensor(shape))


def test_unflatten_errors():
    same_error(lambda lib: lib.nn.Unflatten(1, 5))
    same_error(lambda lib: lib.nn.Unflatten(1, (2, 2.0)))
    same_error(lambda lib: lib.nn.Unflatten(1, (3, 3))(lib.ones(2, 8)))
