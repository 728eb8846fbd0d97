"""``bincount``, ``histc`` (ember/native/summary_ops.py) and ``histogram``
(ember/native/histogram.py) against torch: weights, minlength, ranges, edges given
or computed, density, values outside the range, empty and 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


def test_bincount_matches_torch():
    x = make_tensor((20,), "int64", low=0, high=6)
    weights = make_tensor((20,), "float32")
    assert_parity(lambda lib, t: lib.bincount(t), x, grad=False)
    assert_parity(lambda lib, t: t.bincount(minlength=10), x, grad=False)
    assert_parity(lambda lib, t, w: lib.bincount(t, w), x, weights, grad=False)
    assert_parity(lambda lib, t, w: lib.bincount(t, w), x, weights.astype("float64"), grad=False)
    assert_parity(lambda lib, t, w: lib.bincount(t, w, minlength=3), x, x.copy(), grad=False)  # int weights: float64
    assert_parity(lambda lib, t: lib.bincount(t), np.zeros(0, dtype="int64"), grad=False)


def test_bincount_errors_match_torch():
    assert_same_error(lambda lib: lib.bincount(lib.tensor([-1])))
    assert_same_error(lambda lib: lib.bincount(lib.ones(2, 2, dtype=lib.int64)))
    assert_same_error(lambda lib: lib.bincount(lib.tensor([1.0])))
    assert_same_error(lambda lib: lib.bincount(lib.tensor([True])))
    assert_same_error(lambda lib: lib.bincount(lib.tensor([1]), minlength=-1))
    assert_same_error(lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_matches_torch(dtype):
    x = make_tensor((6, 7), dtype)
    assert_parity(lambda lib, t: lib.histc(t), x, grad=False)
    assert_parity(lambda lib, t: t.histc(bins=7, min=-1, max=2), x, grad=False, noncontiguous=True)
    assert_parity(lambda lib, t: lib.histc(t, bins=3), np.ones(4, dtype=dtype), grad=False)  # one value: widened
    assert_parity(lambda lib, t: lib.histc(t, bins=4), np.zeros(0, dtype=dtype), grad=False)
    assert_parity(lambda lib, t: lib.histc(t, bins=4, min=0, max=3), np.asarray(np.float64(1.5).astype(dtype)),
                  grad=False)


def test_histc_errors_match_torch():
    assert_same_error(lambda lib: lib.histc(lib.tensor([1, 2])))
    assert_same_error(lambda lib: lib.histc(lib.tensor([1.0]), bins=0))
    assert_same_error(lambda lib: lib.histc(lib.tensor([1.0]), min=3, max=1))
    assert_same_error(lambda lib: lib.histc(lib.tensor([1.0, float("nan")])))
    assert_same_error(lambda lib: lib.histc(lib.tensor([1.0, float("inf")])))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_matches_torch(dtype, density):
    x, w = make_tensor((5, 4), dtype), make_tensor((5, 4), dtype, low=0, seed=1)
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 2.5], dtype=dtype)
    assert_parity(lambda lib, t: lib.histogram(t, 6, density=density), x, grad=False)
    assert_parity(lambda lib, t: t.histogram(3, range=(-1.0, 1.0), density=density), x, grad=False)
    assert_parity(lambda lib, t, e, v: lib.histogram(t, e, weight=v, density=density), x, edges, w, grad=False)
    assert_parity(lambda lib, t: lib.histogram(t, 4, density=density), np.full(3, 2.0, dtype=dtype), grad=False)
    assert_parity(lambda lib, t: lib.histogram(t, 4), np.zeros(0, dtype=dtype), grad=False)


def test_histogram_errors_match_torch():
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1, 2]), 2))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 2, range=(2.0, 1.0)))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([[1.0, 2.0]])))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 2, weight=lib.ones(3)))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0], dtype=lib.float64)))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, float("nan")]), 2))
    assert_same_error(lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([1.0])))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_matches_torch(dtype, density):
    points, w = make_tensor((4, 5, 3), dtype), make_tensor((4, 5), dtype, low=0, seed=1)
    edges = [np.array(e, dtype=dtype) for e in ([-2.0, 0.0, 2.5], [-3.0, -1.0, 0.5, 1.0, 3.0], [-1.0, 1.0])]
    assert_parity(lambda lib, t: lib.histogramdd(t, 3, density=density), points, grad=False)
    assert_parity(lambda lib, t: lib.histogramdd(t, [2, 4, 1], density=density), points, grad=False,
                  noncontiguous=True)
    assert_parity(lambda lib, t, v: lib.histogramdd(t, [2, 3, 2], range=[-1.0, 1.0, 0.0, 2.0, -3.0, 0.5],
                                                    weight=v, density=density), points, w, grad=False)
    assert_parity(lambda lib, t, a, b, c, v: lib.histogramdd(t, [a, b, c], weight=v, density=density),
                  points, *edges, w, grad=False)
    assert_parity(lambda lib, t: lib.histogramdd(t, 2, density=density), np.full((3, 2), 1.5, dtype=dtype),
                  grad=False)  # one value per dimension: widened by 0.5
    assert_parity(lambda lib, t: lib.histogramdd(t, [2, 3]), np.zeros((0, 2), dtype=dtype), grad=False)
    assert_parity(lambda lib, t: lib.histogramdd(t, 4, density=density), np.zeros((5, 0), dtype=dtype), grad=False)


def test_histogramdd_errors_match_torch():
    x = make_tensor((5, 2), "float32")
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor([1.0, 2.0]), 2))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x).long(), 2))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [3]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [3, 0]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), 3, range=[0.0, 1.0]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), 3, range=[0.0, 1.0, 1.0, 0.0]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), 3, range=[0.0, 1.0, 0.0, float("inf")]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor([[1.0, float("nan")]]), 2))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [lib.tensor([0.0, 1.0])]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [lib.tensor([0.0, 1.0]), lib.tensor([[0.0, 1.0]])]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [lib.tensor([0.0, 1.0]), lib.tensor([1.0])]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), [lib.tensor([0.0, 1.0]),
                                                                  lib.tensor([0.0, 1.0], dtype=lib.float64)]))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), 3, weight=lib.ones(5, 2)))
    assert_same_error(lambda lib: lib.histogramdd(lib.tensor(x), 3, weight=lib.ones(5, dtype=lib.float64)))
