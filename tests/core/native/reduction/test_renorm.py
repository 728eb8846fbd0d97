"""``renorm`` against torch (ember/native/reduction/renorm.py): p, dim, slices over and
under the limit, values and gradients (through the norm), the in-place form, errors."""

import math

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("p", [1, 2, 3.5, math.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_renorm_matches_torch(p, dtype):
    x = make_tensor((3, 4, 2), dtype)
    for dim in (0, 1, -1):
        assert_parity(lambda lib, t: lib.renorm(t, p, dim, 2.0), x, rtol=1e-5, atol=1e-6)
    assert_parity(lambda lib, t: t.renorm(p, 0, 100.0), x, noncontiguous=True)  # every slice within the limit
    assert_parity(lambda lib, t: (t * 1).renorm_(p, 1, 0.5), x, rtol=1e-5, atol=1e-6)
    assert_parity(lambda lib, t: lib.renorm(t, p, 0, 1.0), np.zeros((0, 3), dtype=dtype))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.renorm(lib.ones(3), 1, 0, 1))
    assert_same_error(lambda lib: lib.renorm(lib.ones(3, 3), 0, 0, 1))
    assert_same_error(lambda lib: lib.renorm(lib.ones(3, 3), 1, 0, -1))
    assert_same_error(lambda lib: lib.renorm(lib.ones(3, 3, dtype=lib.int64), 1, 0, 1))
