"""``cummax``, ``cummin``, ``logcumsumexp`` and ``diff`` against torch
(ember/native/reduction/cumulative.py): values, indices (ties, NaN), gradients,
every dim, dtypes, large and -inf inputs, prepend/append, 0-d and empty inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


def ties(shape, dtype):
    return np.asarray(np.random.default_rng(0).integers(0, 3, size=shape)).astype(dtype)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_running_extremes_match_torch(fn, dtype):
    for x in (make_tensor((3, 5, 4), dtype), ties((4, 7), dtype)):
        for dim in range(-x.ndim, x.ndim):
            assert_parity(lambda lib, t: getattr(lib, fn)(t, dim), x)
        assert_parity(lambda lib, t: getattr(t, fn)(-1), x, noncontiguous=True)
    assert_parity(lambda lib, t: getattr(t, fn)(0), np.asarray(make_tensor((), dtype)))
    assert_parity(lambda lib, t: getattr(t, fn)(1), np.zeros((2, 0), dtype=dtype))


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_running_extremes_with_nan_match_torch(fn):
    x = np.array([[1.0, np.nan, 3.0, np.nan, 0.0], [2.0, 2.0, 5.0, 1.0, np.nan]])
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 1), x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logcumsumexp_matches_torch(dtype):
    x = make_tensor((3, 6), dtype, low=-5, high=5)
    for dim in (0, 1, -1):
        assert_parity(lambda lib, t: lib.logcumsumexp(t, dim), x, rtol=1e-5, atol=1e-6)
    big = np.array([[1000.0, 1001.0, -np.inf, 999.0], [-np.inf, -np.inf, 0.0, 1.0]], dtype=dtype)
    assert_parity(lambda lib, t: t.logcumsumexp(1), big, rtol=1e-5)
    assert_parity(lambda lib, t: lib.logcumsumexp(t, 0), np.asarray(make_tensor((), dtype)))
    assert_parity(lambda lib, t: lib.logcumsumexp(t, 0), np.zeros((0, 3), dtype=dtype))


def test_logcumsumexp_refuses_integers_as_torch_does():
    assert_same_error(lambda lib: lib.logcumsumexp(lib.ones(3, dtype=lib.int64), 0))
    assert_same_error(lambda lib: lib.logcumsumexp(lib.ones(3, dtype=lib.bool), 0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_diff_matches_torch(dtype, n):
    x = make_tensor((4, 5), dtype)
    for dim in (0, 1, -1):
        assert_parity(lambda lib, t: lib.diff(t, n, dim), x)
    before, after = make_tensor((4, 2), dtype, seed=1), make_tensor((4, 1), dtype, seed=2)
    assert_parity(lambda lib, t, b, a: t.diff(n, 1, prepend=b, append=a), x, before, after)
    assert_parity(lambda lib, t, a: t.diff(n, -1, append=a), x, after, noncontiguous=True)


def test_diff_promotes_and_checks_like_torch():
    assert_parity(lambda lib, t, b: lib.diff(t, prepend=b), make_tensor((3,), "float32"),
                  make_tensor((2,), "int64"))
    assert_same_error(lambda lib: lib.diff(lib.tensor(1.0)))
    assert_same_error(lambda lib: lib.diff(lib.ones(3), n=-1))
    assert_same_error(lambda lib: lib.diff(lib.ones(3), prepend=lib.ones(2, 2)))
