"""``isin`` against torch (ember/native/isin.py): dtypes promoted together, Python
numbers on either side, NaN never found, invert, empty and 0-d tensors, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_torch(dtype, invert):
    elements = np.round(make_tensor((4, 6), "float64")).astype(dtype)
    tests = np.round(make_tensor((5,), "float64", seed=3)).astype(dtype)
    assert_parity(lambda lib, e, t: lib.isin(e, t, invert=invert), elements, tests, grad=False)
    assert_parity(lambda lib, e, t: lib.isin(e, t, assume_unique=True), elements, tests, grad=False,
                  noncontiguous=True)
    assert_parity(lambda lib, e, t: lib.isin(e, t.reshape(-1, 1)), elements, tests, grad=False)


def test_isin_with_numbers_nan_and_mixed_dtypes_matches_torch():
    x = np.array([1.0, 2.5, np.nan, -0.0])
    assert_parity(lambda lib, e, t: lib.isin(e, t), x, x.copy(), grad=False)
    assert_parity(lambda lib, e: lib.isin(e, 2.5), x, grad=False)
    assert_parity(lambda lib, e: lib.isin(2.5, e), x, grad=False)
    assert_parity(lambda lib, e, t: lib.isin(e, t), np.array([1, 2, 3]), np.array([2.0, 2.5]), grad=False)
    assert_parity(lambda lib, e, t: lib.isin(e, t), np.zeros((0, 2)), np.ones(3), grad=False)
    assert_parity(lambda lib, e, t: lib.isin(e, t), np.array(2.0), np.zeros(0), grad=False)


def test_isin_errors_match_torch():
    assert_same_error(lambda lib: lib.isin(lib.ones(2, dtype=lib.bool), lib.ones(2)))
