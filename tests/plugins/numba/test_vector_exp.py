"""ember-numba's vectorizable exponential and row max: within an ulp or so of the
correctly rounded exp over float32's whole range, its edges (subnormal results, the
largest finite one, overflow), NaN and infinities, and the max of rows holding NaN
and signed zeros as torch's max gives it.

Tests for plugins/numba/src/ember_numba/vector_exp.py (PyTorch counterpart:
aten/src/ATen/cpu/vec/vec256/vec256_float.h, v2.13).
"""

import numpy as np
import pytest
import torch

from ember_numba.jit import jit


def applied(values):
    from ember_numba.vector_exp import vector_exp

    @jit  # a loop with jit.py's flags, as the kernels call it (NOTE [ Why not math.exp ])
    def exp_each(x, out):
        for i in range(x.size):
            out[i] = vector_exp(x[i])

    out = np.empty_like(values)
    exp_each(values, out)
    return out


def test_float32_is_within_an_ulp_or_so_over_its_range():
    x = np.random.default_rng(0).uniform(-110, 89, 200_000).astype(np.float32)
    x = np.concatenate([x, np.float32([-103.97, -87.34, -0.0, 0.0, 1e-30, 88.72, 88.7228])])
    exact = np.exp(x.astype(np.float64))
    got = applied(x).astype(np.float64)
    normal = (exact > np.finfo(np.float32).tiny) & (exact < np.finfo(np.float32).max)
    ulps = np.abs(got[normal] - exact[normal]) / np.spacing(exact[normal].astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 1.5
    subnormal = exact <= np.finfo(np.float32).tiny
    assert np.abs(got[subnormal] - exact[subnormal]).max() < 2 * np.finfo(np.float32).smallest_subnormal


def test_the_edges_are_torchs():
    x = np.float32([np.nan, np.inf, -np.inf, -200.0, 89.0, 100.0])
    np.testing.assert_array_equal(applied(x), torch.exp(torch.from_numpy(x)).numpy())


def test_float64_is_the_c_librarys():
    x = np.random.default_rng(1).uniform(-700, 700, 10_000)
    np.testing.assert_allclose(applied(x), np.exp(x), rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_row_max_orders_as_floats_do(dtype):
    from ember_numba.vector_exp import row_max

    @jit
    def maximum(row):
        return row_max(row)

    rng = np.random.default_rng(2)
    for size in (1, 7, 8, 33, 1000):
        row = rng.standard_normal(size).astype(dtype) - 5
        assert maximum(row) == row.max()
    assert maximum(np.array([-0.0, -1.0], dtype)) == 0 and np.signbit(maximum(np.array([-0.0, -1.0], dtype)))
    assert not np.signbit(maximum(np.array([-0.0, 0.0], dtype)))
    assert maximum(np.array([-np.inf, -np.inf], dtype)) == -np.inf
    assert np.isnan(maximum(np.array([1.0, np.nan, np.inf], dtype)))
