"""``cov`` and ``corrcoef`` against torch (ember/native/correlation.py): 1-d and 2-d
inputs, corrections, frequency and importance weights, values and gradients of the
input and of ``aweights``, integers, non-contiguous, empty and 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 6), (6,), (1, 4)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_cov_matches_torch(dtype, shape, correction):
    x = make_tensor(shape, dtype)
    assert_parity(lambda lib, t: lib.cov(t, correction=correction), x)
    assert_parity(lambda lib, t: t.cov(correction=correction), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("correction", [0, 1])
def test_weighted_cov_matches_torch_with_gradients(dtype, correction):
    x = make_tensor((3, 5), dtype)
    fweights = np.array([1, 3, 0, 2, 1])
    aweights = make_tensor((5,), dtype, low=0.1, high=1.0, seed=2)
    assert_parity(lambda lib, t, a: lib.cov(t, correction=correction, aweights=a), x, aweights)
    assert_parity(lambda lib, t, f: lib.cov(t, correction=correction, fweights=f), x, fweights)
    assert_parity(lambda lib, t, f, a: lib.cov(t, correction=correction, fweights=f, aweights=a), x, fweights,
                  aweights)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 6), (6,), (2, 2)])
def test_corrcoef_matches_torch(dtype, shape):
    assert_parity(lambda lib, t: lib.corrcoef(t), make_tensor(shape, dtype))
    assert_parity(lambda lib, t: t.corrcoef(), make_tensor(shape, dtype, seed=5), noncontiguous=True)


def test_integers_constant_rows_empty_and_zero_dim_match_torch():
    assert_parity(lambda lib, t: lib.cov(t), make_tensor((2, 5), "int64"), grad=False)
    assert_parity(lambda lib, t: lib.corrcoef(t), make_tensor((2, 5), "int64"), grad=False)
    assert_parity(lambda lib, t: lib.corrcoef(t), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]), grad=False)
    assert_parity(lambda lib, t: lib.cov(t), make_tensor((), "float64"), grad=False)
    assert_parity(lambda lib, t: lib.cov(t, correction=0), make_tensor((2, 1), "float64"))
    assert_parity(lambda lib, t: lib.corrcoef(t), make_tensor((3,), "float64"))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 2, 2)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 2, dtype=lib.bool)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(3)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(2, dtype=lib.int64)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), fweights=-lib.ones(3, dtype=lib.int64)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.ones(3, dtype=lib.int64)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), aweights=-lib.ones(3)))
    assert_same_error(lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.zeros(3)))
    assert_same_error(lambda lib: lib.corrcoef(lib.ones(2, 2, 2)))
