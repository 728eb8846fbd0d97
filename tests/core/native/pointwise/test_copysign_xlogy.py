"""``copysign`` and ``xlogy`` against torch (ember/native/pointwise/copysign.py, xlogy.py): values
with signed zeros, NaN and infinities, gradients, broadcasting, promotion, scalars."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((4, 3), (4, 3)), ((4, 3), (3,)), ((), (2, 2)), ((0,), (0,))])
def test_copysign_matches_torch(dtype, shapes):
    a, b = make_tensor(shapes[0], dtype, seed=1), make_tensor(shapes[1], dtype, seed=2)
    assert_parity(lambda lib, x, y: lib.copysign(x, y), a, b)
    assert_parity(lambda lib, x, y: x.copysign(y), a, b, noncontiguous=True)
    assert_parity(lambda lib, x: x.copysign(-1.0), a)


def test_copysign_special_values_integers_and_in_place():
    assert_parity(lambda lib, x, y: lib.copysign(x, y), SPECIAL, SPECIAL[::-1].copy(), grad=False)
    assert_parity(lambda lib, x, y: lib.copysign(x, y), np.array([1, -2, 3]), np.array([-1, 1, -1]))
    assert_parity(lambda lib, x, y: x.clone().copysign_(y) * 1, make_tensor((3,), "float64"),
                  make_tensor((3,), "float64", seed=5))
    # The gradient where input is zero is zero.
    assert_parity(lambda lib, x, y: lib.copysign(x, y), np.array([0.0, 2.0, -3.0]), np.array([-1.0, -1.0, 1.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((4, 3), (4, 3)), ((4, 3), (3,)), ((), (2, 2)), ((0,), (0,))])
def test_xlogy_matches_torch(dtype, shapes):
    a = make_tensor(shapes[0], dtype, seed=1)
    b = make_tensor(shapes[1], dtype, low=0.1, high=3.0, seed=2)
    assert_parity(lambda lib, x, y: lib.xlogy(x, y), a, b)
    assert_parity(lambda lib, x, y: x.xlogy(y), a, b, noncontiguous=True)
    assert_parity(lambda lib, y: lib.xlogy(2.0, y), b)
    assert_parity(lambda lib, x: lib.xlogy(x, 3.0), a)


def test_xlogy_special_values_integers_and_in_place():
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, np.nan, -1.0])
    y = np.array([0.0, np.nan, 5.0, 0.0, np.inf, 1.0, 2.0])
    assert_parity(lambda lib, a, b: lib.xlogy(a, b), x, y, grad=False)
    assert_parity(lambda lib, a, b: lib.xlogy(a, b), np.array([0, 2, 3]), np.array([4, 5, 0]))
    assert_parity(lambda lib, a, b: a.clone().xlogy_(b) * 1, make_tensor((3,), "float64"),
                  make_tensor((3,), "float64", low=0.5, seed=5))


def test_xlogy_double_backward_matches_torch():
    x, y = make_tensor((5,), "float64"), make_tensor((5,), "float64", low=0.5, seed=3)
    grads = []
    for lib in (ember, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        ga, gb = lib.autograd.grad(lib.xlogy(a, b).sum(), (a, b), create_graph=True)
        grads.append([g.detach().numpy() for g in lib.autograd.grad((ga * gb).sum(), (a, b))])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_errors_match_torch():
    for call in (lambda lib: lib.copysign(1.0, lib.ones(2)), lambda lib: lib.xlogy(1.0, 2.0)):
        with pytest.raises(TypeError):
            call(torch)
        with pytest.raises(TypeError):
            call(ember)
