"""``cartesian_prod`` and ``combinations`` against torch (ember/native/itertools.py):
values, gradients (an element in several tuples sums), dtypes, empty inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_cartesian_prod_matches_torch(dtype):
    a, b, c = make_tensor((3,), dtype), make_tensor((2,), dtype, seed=1), make_tensor((4,), dtype, seed=2)
    assert_parity(lambda lib, x, y, z: lib.cartesian_prod(x, y, z), a, b, c)
    assert_parity(lambda lib, x: lib.cartesian_prod(x), a)
    assert_parity(lambda lib, x, y: lib.cartesian_prod(x, y), a, np.zeros(0, dtype=dtype))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_match_torch(r, with_replacement):
    x = make_tensor((4,), "float64")
    assert_parity(lambda lib, t: lib.combinations(t, r, with_replacement=with_replacement), x)
    assert_parity(lambda lib, t: lib.combinations(t, r, with_replacement), make_tensor((3,), "int64"))
    assert_parity(lambda lib, t: lib.combinations(t, r, with_replacement), np.zeros(0))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.combinations(lib.arange(4), -1))
    assert_same_error(lambda lib: lib.combinations(lib.ones(2, 2)))
    assert_same_error(lambda lib: lib.cartesian_prod(lib.ones(2, 2), lib.ones(2)))
