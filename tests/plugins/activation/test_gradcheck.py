"""Gradients of the activations beyond the first: gradcheck (float64 finite
differences) for every functional form, gradgradcheck for the smooth ones, second
derivatives against torch's, and the backward ops themselves.

Tests for plugins/activation/src/ember_activation/_pointwise.py (NOTE [ Two ops per
activation ]) and the functional forms (PyTorch counterpart: the ``*_backward``
entries of tools/autograd/derivatives.yaml, v2.13).
"""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor
from tests.plugins.activation.cases import ALONG_DIM, ELEMENTWISE, KINKS, SMOOTH, case_id


def away_from_kinks(shape, seed):
    # Finite differences straddling a kink measure neither side's slope: keep every
    # value at least 0.01 from the breakpoints the cases use.
    values = make_tensor(shape, "float64", low=-4, high=4, seed=seed)
    for kink in KINKS:
        close = np.abs(values - kink) < 0.01
        values[close] = kink + 0.05
    return values


def functional(name):
    return getattr(ember.nn.functional, name)


@pytest.mark.parametrize("case", ELEMENTWISE + ALONG_DIM, ids=case_id)
def test_gradcheck(case):
    name, kwargs = case
    x = ember.tensor(away_from_kinks((3, 4, 2), seed=11), requires_grad=True)
    assert gradcheck(lambda x: functional(name)(x, **kwargs), (x,))


@pytest.mark.parametrize("shapes", [((3, 4, 2), (4,)), ((5,), (1,))], ids=str)
def test_gradcheck_prelu(shapes):
    x = ember.tensor(away_from_kinks(shapes[0], seed=2), requires_grad=True)
    w = ember.tensor(make_tensor(shapes[1], "float64", seed=3), requires_grad=True)
    assert gradcheck(lambda x, w: ember.nn.functional.prelu(x, w), (x, w))


@pytest.mark.parametrize("case", SMOOTH + ALONG_DIM, ids=case_id)
def test_gradgradcheck(case):
    name, kwargs = case
    x = ember.tensor(away_from_kinks((2, 4, 2), seed=5), requires_grad=True)
    assert gradgradcheck(lambda x: functional(name)(x, **kwargs), (x,))


def first_derivative(lib, name, kwargs):
    # The gradient of f at x against seed v, kept differentiable: its backward gives
    # v * f''(x) for x and f'(x) for v (the backward op's own backward).
    def run(lib, x, v):
        y = getattr(lib.nn.functional, name)(x, **kwargs)
        (grad,) = lib.autograd.grad(y, x, v, create_graph=True)
        return grad
    return run


# relu's second derivative (the core's threshold_backward) is None rather than zeros,
# and torch has no double backward for hardsigmoid: both are checked separately below.
SECOND_ORDER = [case for case in SMOOTH + ELEMENTWISE if case[0] not in ("relu", "hardsigmoid")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_derivative_matches_torch(case, dtype):
    name, kwargs = case
    x = make_tensor((4, 5), dtype, low=-5, high=5, seed=7)
    v = make_tensor((4, 5), dtype, low=-1, high=1, seed=8)
    assert_parity(first_derivative(None, name, kwargs), x, v)


@pytest.mark.parametrize("name", ["relu", "hardsigmoid"])
def test_second_derivative_of_piecewise_linear_is_zero(name):
    x = ember.tensor(make_tensor((6,), "float64", seed=1), requires_grad=True)
    v = ember.tensor(make_tensor((6,), "float64", seed=2), requires_grad=True)
    grad = first_derivative(None, name, {})(ember, x, v)
    grad_x, grad_v = ember.autograd.grad(grad.sum(), (x, v), allow_unused=True)
    assert grad_x is None or not bool(grad_x.ne(0).any())
    (expected_v,) = ember.autograd.grad(functional(name)(x).sum(), x)
    np.testing.assert_array_equal(grad_v.numpy(), expected_v.numpy())


@pytest.mark.parametrize("case", SMOOTH, ids=case_id)
def test_second_derivative_at_extremes_matches_torch(case):
    name, kwargs = case
    x = np.array([-60.0, -30.0, -8.0, 0.0, 8.0, 30.0, 60.0])
    assert_parity(first_derivative(None, name, kwargs), x, np.linspace(-1, 1, 7), atol=1e-12)


@pytest.mark.parametrize("case", [("elu", {}), ("elu", {"alpha": 2.0}), ("celu", {"alpha": 2.0}), ("selu", {})],
                         ids=case_id)
def test_second_derivative_at_the_kink_matches_torch(case):
    # At 0 the first derivative takes the negative branch's slope, the second is 0.
    name, kwargs = case
    assert_parity(first_derivative(None, name, kwargs), np.array([-1.0, -0.0, 0.0, 1.0]),
                  np.array([0.5, -1.0, 1.5, 2.0]))


@pytest.mark.parametrize("case", [("gelu", {}), ("silu", {}), ("softplus", {"beta": 2.0, "threshold": 20.0}),
                                  ("elu", {}), ("mish", {})], ids=case_id)
def test_third_derivative_by_finite_differences(case):
    # The backward op's backward is written with ember ops, so it too can be differentiated.
    name, kwargs = case
    x = ember.tensor(away_from_kinks((6,), seed=4), requires_grad=True)

    def second(x):
        (grad,) = ember.autograd.grad(functional(name)(x, **kwargs).sum(), x, create_graph=True)
        return grad

    assert gradgradcheck(second, (x,))


@pytest.mark.parametrize("op_name", ["gelu", "silu", "mish", "softplus", "log_sigmoid", "elu", "celu", "leaky_relu",
                                     "hardtanh", "hardsigmoid", "hardswish", "threshold", "hardshrink",
                                     "softshrink"])
def test_each_fused_op_and_its_backward_are_registered(op_name):
    namespace = ember.ops.activation
    forward, backward = getattr(namespace, op_name), getattr(namespace, op_name + "_backward")
    catalogue = ember.plugins.registry.catalogue("ops")
    for op in (forward, backward):
        entry = catalogue[op.qualname]
        assert entry.obj is op and entry.plugin == "activation"
        assert op.backward is not None
