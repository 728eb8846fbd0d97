"""poisson_nll_loss and gaussian_nll_loss (ember_loss/likelihood.py) against PyTorch:
every reduction, float32/float64, log_input, full (Stirling's term), eps, var shapes
(PyTorch's broadcasting rules and errors), gradients of input, target and var, gradcheck."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]


def counts(shape, seed=2):
    # includes 0 and 1 (where the Stirling term is dropped) and larger counts
    return np.asarray(np.random.default_rng(seed).integers(0, 6, size=shape), dtype="float64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll(dtype, reduction, log_input, full):
    x = make_tensor((3, 4), dtype, seed=1)
    if not log_input:
        x = np.abs(x) + 0.1
    fn = lambda lib, x, t: lib.nn.functional.poisson_nll_loss(x, t, log_input=log_input, full=full,
                                                              reduction=reduction)
    # target gradient compared where torch's is finite: counts above 1 or full=False
    t = counts((3, 4)).astype(dtype)
    if full:
        t = t + 1.5
    assert_parity(fn, x, t)


def test_poisson_nll_full_with_small_counts_input_gradient():
    t = counts((3, 4))
    fn = lambda lib, x: lib.nn.functional.poisson_nll_loss(x, lib.tensor(t), full=True)
    assert_parity(fn, make_tensor((3, 4), "float64", seed=1))


def test_poisson_nll_eps_and_errors():
    x = np.abs(make_tensor((5,), "float64")) * 0
    fn = lambda lib, x: lib.nn.functional.poisson_nll_loss(x, lib.ones(5, dtype=lib.float64), log_input=False,
                                                           eps=0.5)
    assert_parity(fn, x)
    bad = lambda lib, x: lib.nn.functional.poisson_nll_loss(x, lib.ones(5, dtype=lib.float64), reduction="avg")
    assert_parity(bad, x)


VAR_SHAPES = [(3, 4), (3,), (3, 1), (1, 4), ()]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1), (1, 4)])
def test_gaussian_nll(dtype, reduction, full, var_shape):
    var = np.abs(make_tensor(var_shape, dtype, seed=3)) + 0.05
    fn = lambda lib, x, t, v: lib.nn.functional.gaussian_nll_loss(x, t, v, full=full, reduction=reduction)
    assert_parity(fn, make_tensor((3, 4), dtype, seed=1), make_tensor((3, 4), dtype, seed=2), var)


def test_gaussian_nll_eps_clamp_keeps_gradient_like_torch():
    var = np.array([1e-9, 0.0, 0.5, 2.0])
    fn = lambda lib, x, t, v: lib.nn.functional.gaussian_nll_loss(x, t, v, eps=1e-3, reduction="sum")
    assert_parity(fn, make_tensor((4,), "float64", seed=1), make_tensor((4,), "float64", seed=2), var)


def test_gaussian_nll_float_var():
    fn = lambda lib, x, t: lib.nn.functional.gaussian_nll_loss(x, t, 0.7)
    assert_parity(fn, make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2))


@pytest.mark.parametrize("var", [np.full((3, 4), -1.0), np.ones((2, 4)), np.ones((3, 4, 1)), np.ones((4,)),
                                 np.ones((1, 1))])
def test_gaussian_nll_var_errors(var):
    fn = lambda lib, x, t: lib.nn.functional.gaussian_nll_loss(x, t, lib.tensor(var))
    assert_parity(fn, make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2))


def test_gaussian_nll_negative_float_var_and_bad_reduction():
    x, t = make_tensor((3,), "float64", seed=1), make_tensor((3,), "float64", seed=2)
    assert_parity(lambda lib, x, t: lib.nn.functional.gaussian_nll_loss(x, t, -1.0), x, t)
    assert_parity(lambda lib, x, t: lib.nn.functional.gaussian_nll_loss(x, t, 1.0, reduction="avg"), x, t)


def test_gradcheck():
    x = ember.tensor(make_tensor((3, 4), "float64", seed=1)).requires_grad_()
    t = ember.tensor(counts((3, 4)) + 2).requires_grad_()
    v = ember.tensor(np.abs(make_tensor((3, 1), "float64", seed=3)) + 0.1).requires_grad_()
    F = ember.nn.functional
    assert gradcheck(lambda x, t: F.poisson_nll_loss(x, t, full=True), (x, t))
    assert gradcheck(lambda x, t: F.poisson_nll_loss(x.abs() + 0.1, t, log_input=False), (x, t))
    assert gradcheck(lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True), (x, t, v))


def test_poisson_full_target_gradient_at_zero_is_finite():
    # deliberate difference: torch's target gradient is nan at 0 (0 * log 0 in its Stirling term)
    t = ember.tensor([0.0, 1.0, 3.0], requires_grad=True)
    x = ember.tensor([0.1, -0.2, 0.3])
    ember.nn.functional.poisson_nll_loss(x, t, full=True, reduction="sum").backward()
    assert abs(t.grad[0].item() + 0.1) < 1e-6  # d/dt (exp(x) - t x) = -x
