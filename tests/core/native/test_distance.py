"""``cdist`` against torch (ember/native/distance.py): every p, both algorithms, batch
broadcasting, values and gradients (coinciding points included), float32 and float64,
empty inputs, errors."""

import math

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_p_matches_torch(p, dtype):
    x1, x2 = make_tensor((2, 4, 3), dtype), make_tensor((5, 3), dtype, seed=1)
    assert_parity(lambda lib, a, b: lib.cdist(a, b, p=p, compute_mode=MODES[2]), x1, x2, rtol=1e-5, atol=1e-5)
    assert_parity(lambda lib, a, b: lib.cdist(a, b, p=p), x1, x2, noncontiguous=True, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_the_euclidean_algorithms_match_torch(mode):
    x1, x2 = make_tensor((3, 1, 30, 4), "float64"), make_tensor((2, 27, 4), "float64", seed=1)
    assert_parity(lambda lib, a, b: lib.cdist(a, b, compute_mode=mode), x1, x2)


@pytest.mark.parametrize("mode", MODES)
def test_coinciding_points_have_a_zero_gradient_as_in_torch(mode):
    x = make_tensor((30, 3), "float64")
    assert_parity(lambda lib, a: lib.cdist(a, a, compute_mode=mode), x, atol=1e-6)
    assert_parity(lambda lib, a, b: lib.cdist(a, b, p=1.0, compute_mode=mode), x, x.copy())


def test_empty_sets_match_torch():
    assert_parity(lambda lib, a, b: lib.cdist(a, b), np.zeros((0, 3)), make_tensor((4, 3), "float64"))
    assert_parity(lambda lib, a, b: lib.cdist(a, b), make_tensor((4, 0), "float64"), np.zeros((2, 0)))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3)))
    assert_same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)))
    assert_same_error(lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64)))
    assert_same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1))
    assert_same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="fast"))


def test_larger_sets_take_the_matrix_product_by_default():
    import ember

    a = ember.from_numpy(make_tensor((26, 3), "float64")).requires_grad_()
    assert type(ember.cdist(a, a[:2]).grad_fn).__name__ == "EuclideanDistBackward0"
    assert type(ember.cdist(a[:25], a[:2]).grad_fn).__name__ == "CdistBackward0"
    assert np.isfinite(ember.cdist(a, a).sum().backward() or a.grad.numpy()).all()


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, float("inf"), float("-inf")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dist_matches_torch(p, dtype):
    a, b = make_tensor((3, 4), dtype), make_tensor((4,), dtype, seed=2)
    grad = p != 0  # torch's backward of the 0-"norm" raises (its gradient is zero; ember gives the zeros)
    assert_parity(lambda lib, x, y: lib.dist(x, y, p), a, b, grad=grad)
    assert_parity(lambda lib, x, y: x.dist(y, p=p), a, b, grad=grad, noncontiguous=True)
    assert_parity(lambda lib, x, y: lib.dist(x, y, p), make_tensor((), dtype), make_tensor((0,), dtype), grad=grad)


def test_dist_of_mixed_dtypes_and_integers_matches_torch():
    assert_parity(lambda lib, x, y: lib.dist(x, y), make_tensor((3,), "float32"), make_tensor((3,), "float64"))
    assert_parity(lambda lib, x, y: lib.dist(x, y), make_tensor((3,), "int64"), make_tensor((3,), "float32"))
