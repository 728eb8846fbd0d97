"""The compiled cummax and cummin of ember-numba against the core's NumPy kernel (bit for
bit: the loop only compares and copies) and against torch: float32 and float64, every
dim, ties, NaN, infinities and zeros of both signs, and the inputs that go back to the
NumPy kernel.

Tests for plugins/numba/src/ember_numba/cumulative_extreme.py (PyTorch counterpart:
aten/src/ATen/native/ReduceOps.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.native.reduction import cumulative as core
from ember_numba import cumulative_extreme as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

OPS = [(core.CUMMAX, compiled.cummax, torch.cummax), (core.CUMMIN, compiled.cummin, torch.cummin)]


def values(shape, dtype, seed):
    """Halves (ties), with NaN, infinities and zeros of both signs shuffled in."""
    rng = np.random.default_rng(seed)
    x = (np.round(rng.standard_normal(shape) * 2) / 2).astype(dtype)
    flat = x.reshape(-1)
    flat[:8] = [np.nan, 0.0, -0.0, np.inf, -np.inf, np.nan, -0.0, 0.0]
    rng.shuffle(flat)
    return x


def test_the_cpu_kernels_are_the_compiled_ones():
    assert core.CUMMAX.kernel_for("cpu") is compiled.cummax
    assert core.CUMMIN.kernel_for("cpu") is compiled.cummin


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op, kernel, theirs", OPS, ids=["cummax", "cummin"])
def test_matches_the_numpy_kernel_bit_for_bit_and_torch(monkeypatch, dtype, dim, op, kernel, theirs):
    x = values((5, 40, 3), dtype, seed=dim)
    expected_values, expected_indices = op.generic(np, x, dim)
    monkeypatch.setattr(op, "generic", no_fallback)
    out_values, out_indices = kernel(np, x, dim)
    assert_same_bits([out_values], [expected_values])
    np.testing.assert_array_equal(out_indices, expected_indices)
    t = theirs(torch.from_numpy(x), dim)
    assert_same_bits([out_values], [t.values.numpy()])
    np.testing.assert_array_equal(out_indices, t.indices.numpy())


def test_the_gradient_reaches_the_indices():
    x = values((6, 9), np.float32, seed=4)
    x[np.isnan(x)] = 1.5
    e, t = ember.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    grad = np.random.default_rng(5).standard_normal(x.shape).astype(np.float32)
    e.cummax(1).values.backward(ember.from_numpy(grad))
    t.cummax(1).values.backward(torch.from_numpy(grad))
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("make", [
    lambda: values((4, 6), np.float32, 0)[:, ::2],  # strided
    lambda: values((4, 6), np.float32, 0).astype(np.float16),
    lambda: np.arange(12, dtype=np.int64).reshape(3, 4),
    lambda: np.zeros((0, 3), np.float32),
    lambda: np.array(2.0, np.float32),  # 0-d
], ids=["strided", "float16", "int64", "empty", "0-d"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, make):
    x = make()
    dim = 0
    expected = core.CUMMAX.generic(np, x, dim)
    calls = numpy_kernel_calls(monkeypatch, core.CUMMAX)
    for got, want in zip(compiled.cummax(np, x, dim), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert calls == [core.CUMMAX.qualname]
