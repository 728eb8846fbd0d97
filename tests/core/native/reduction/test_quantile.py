"""``quantile`` and ``nanquantile`` against torch (ember/native/reduction/quantile.py):
every interpolation, scalar and 1-d ``q``, dim/keepdim, NaN, ties, values and
gradients, float32/64, 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


def with_nans(shape, dtype):
    x = make_tensor(shape, dtype)
    x.reshape(-1)[::4] = np.nan
    return x


@pytest.mark.parametrize("interpolation", MODES)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_quantiles_match_torch(interpolation, fn, dtype):
    x = make_tensor((4, 6), dtype)
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0], dtype=dtype)
    for dim in (None, 0, 1, -1):
        for keepdim in (False, True):
            assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.3, dim, keepdim, interpolation=interpolation), x)
            assert_parity(lambda lib, t, r: getattr(t, fn)(r, dim, keepdim, interpolation=interpolation), x, q)
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.5, 1, interpolation=interpolation), x, noncontiguous=True)


@pytest.mark.parametrize("interpolation", MODES)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_nan_ties_and_zero_dim_match_torch(interpolation, fn):
    x = with_nans((3, 8), "float64")
    x[2] = np.nan  # an all-NaN row
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.4, 1, interpolation=interpolation), x)
    # Over all elements the NaN read is the one torch's (unstable) sort puts last among
    # equal NaNs: the value agrees, which NaN gets the gradient is torch's sort's choice.
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.5, interpolation=interpolation), x, grad=False)
    ties = np.array([[1.0, 2.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0, 0.0]])
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.5, 1, interpolation=interpolation), ties)
    assert_parity(lambda lib, t: getattr(lib, fn)(t, 0.5, 0, True, interpolation=interpolation),
                  make_tensor((), "float64"))


def test_errors_match_torch():
    x = [[1.0, 2.0], [3.0, 4.0]]
    assert_same_error(lambda lib: lib.quantile(lib.tensor([]), 0.5))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x).long(), 0.5))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x), 1.5))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x), lib.tensor([0.5], dtype=lib.float64)))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x), 0.5, interpolation="cubic"))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x), lib.tensor(x) / 8))
    assert_same_error(lambda lib: lib.nanquantile(lib.tensor(x), lib.tensor([0.5, 2.0])))
    assert_same_error(lambda lib: lib.quantile(lib.tensor(x), 0.5, dim=2))
