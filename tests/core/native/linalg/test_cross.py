"""``cross`` and ``linalg.cross`` against torch (ember/native/linalg/cross.py): values and
gradients, broadcasting, every dim, the default dim and its warning, dtypes, errors."""

import pytest
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_cross_matches_torch(dtype):
    a, b = make_tensor((4, 3), dtype), make_tensor((4, 3), dtype, seed=1)
    assert_parity(lambda lib, x, y: lib.linalg.cross(x, y), a, b)
    assert_parity(lambda lib, x, y: lib.cross(x, y, dim=1), a, b, noncontiguous=True)
    assert_parity(lambda lib, x, y: x.cross(y, dim=-1), a, b[:1])  # broadcast
    c, d = make_tensor((3, 2, 5), dtype), make_tensor((3, 1, 5), dtype, seed=1)
    assert_parity(lambda lib, x, y: lib.linalg.cross(x, y, dim=0), c, d)


def test_cross_without_dim_takes_the_first_size_3_dim_and_warns():
    a, b = make_tensor((2, 3, 3), "float64"), make_tensor((2, 3, 3), "float64", seed=1)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        assert_parity(lambda lib, x, y: lib.cross(x, y), a, b)
    with pytest.warns(UserWarning):
        assert ember.cross(ember.ones(3), ember.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)))
    assert_same_error(lambda lib: lib.linalg.cross(lib.ones(3, 2), lib.ones(3, 2)))
    assert_same_error(lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.cross(lib.ones(2, 2), lib.ones(2, 2)))
