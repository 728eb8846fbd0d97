"""The float32 normal CDF behind exact GELU (NOTE [ A fast normal CDF for float32 ] in
plugins/activation/src/ember_activation/gelu_fast.py) against the exact CDF in float64
(scipy's erfc), on a dense grid over the whole line, across block boundaries, and at
the special values; GELU and its gradient built on it against torch on large inputs."""

import math

import numpy as np
import pytest
import scipy.special

import ember
from ember.testing import assert_parity
from ember_activation import gelu as gelu_module


def exact_cdf(x):
    return 0.5 * scipy.special.erfc(-np.asarray(x, np.float64) / math.sqrt(2))


def test_cdf_is_accurate_over_the_line():
    x = np.linspace(-14, 14, 2_000_001, dtype=np.float32)  # several blocks, one partial
    got = gelu_module._normal_cdf(np, x)
    assert got.dtype == np.float32 and got.shape == x.shape
    expected = exact_cdf(x)
    assert np.abs(got - expected).max() <= 5e-7
    tail = expected > 1e-30  # relative accuracy in the negative tail, where 1 + erf(x) would cancel
    assert (np.abs(got - expected)[tail] / expected[tail]).max() <= 1e-5


def test_cdf_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 40.0, -40.0], np.float32)
    got = gelu_module._normal_cdf(np, x)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[[1, 2, 5, 6]], [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(got[3:5], 0.5, rtol=2.4e-7)  # within one float32 ulp of 0.5


@pytest.mark.parametrize("shape", [(3,), (7, 33000), (2, 5, 4)])
def test_cdf_keeps_shape_and_layout(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    transposed = x.T  # a non-contiguous input
    np.testing.assert_allclose(gelu_module._normal_cdf(np, transposed), exact_cdf(transposed), atol=5e-7)


def test_float64_keeps_the_exact_erf():
    x = np.linspace(-8, 8, 1001)
    expected = 0.5 * (1 + scipy.special.erf(x * gelu_module.INV_SQRT_2))
    np.testing.assert_array_equal(gelu_module._normal_cdf(np, x), expected)


def test_gelu_and_gradient_match_torch_on_a_large_input():
    x = np.random.default_rng(1).normal(0, 3, (70_000,)).astype(np.float32)
    assert_parity(lambda lib, x: lib.nn.functional.gelu(x), x)
    assert ember.nn.functional.gelu(ember.tensor(x)).dtype is ember.float32
