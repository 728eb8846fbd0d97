"""``take``, ``put`` and ``put_`` against torch (ember/native/indexing/take_put.py):
flat positions (negative ones too), accumulate, values and gradients, dtypes, 0-d and
empty inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_take_matches_torch(dtype):
    x = make_tensor((3, 4), dtype)
    index = np.array([[0, 11, -1], [5, 5, -12]])
    assert_parity(lambda lib, t, i: lib.take(t, i), x, index)
    assert_parity(lambda lib, t, i: t.take(i), x, index, noncontiguous=True)
    assert_parity(lambda lib, t, i: lib.take(t, i), np.asarray(make_tensor((), dtype)), np.array([0, -1]))
    assert_parity(lambda lib, t, i: lib.take(t, i), np.zeros(0, dtype=dtype), np.zeros(0, dtype="int64"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("accumulate", [False, True])
def test_put_matches_torch(dtype, accumulate):
    x, source = make_tensor((3, 4), dtype), make_tensor((2, 2), dtype, seed=1)
    index = np.array([[0, 11], [-1, 3]]) if not accumulate else np.array([[0, 11], [-1, 0]])
    assert_parity(lambda lib, t, i, s: t.put(i, s, accumulate=accumulate), x, index, source)
    assert_parity(lambda lib, t, i, s: (t * 1).put_(i, s, accumulate), x, index, source)
    assert_parity(lambda lib, t, i, s: lib.put(t, i, s), np.asarray(make_tensor((), dtype)), np.array([0]),
                  make_tensor((1,), dtype))


def test_errors_match_torch():
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert_same_error(lambda lib: lib.take(lib.tensor(x), lib.tensor([6])))
    assert_same_error(lambda lib: lib.take(lib.tensor(x), lib.tensor([-7])))
    assert_same_error(lambda lib: lib.take(lib.tensor(x), lib.tensor([1.0])))
    assert_same_error(lambda lib: lib.take(lib.tensor(x), lib.tensor([1], dtype=lib.int32)))
    assert_same_error(lambda lib: lib.take(lib.tensor([]), lib.tensor([0])))
    assert_same_error(lambda lib: lib.tensor(x).put(lib.tensor([6]), lib.ones(1)))
    assert_same_error(lambda lib: lib.tensor(x).put(lib.tensor([1]), lib.ones(2)))
    assert_same_error(lambda lib: lib.tensor(x).put(lib.tensor([1]), lib.ones(1, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.tensor(x).put_(lib.tensor([1.0]), lib.ones(1)))
