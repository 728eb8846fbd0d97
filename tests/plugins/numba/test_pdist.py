"""The compiled pdist of ember-numba (``aten::_pdist_forward`` and ``aten::_pdist_backward``)
against the core's NumPy kernels and against torch on the same arrays: float32 and
float64, every kind of p, coinciding rows (a zero distance), and the inputs that go back
to the NumPy kernels.

Tests for plugins/numba/src/ember_numba/pdist.py (PyTorch counterpart:
aten/src/ATen/native/cpu/DistanceOpsKernel.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.native import distance as core
from ember_numba import pdist as compiled
from tests.plugins.numba.kernel_bits import no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

PS = [2.0, 1.0, 0.0, float("inf"), 3.0, 0.5]
# a reassociated sum against NumPy's pairwise one: a few roundings apart
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


def rows(dtype, shape=(37, 11), seed=0):
    """Normal rows, two of them equal (a zero distance) and two sharing a component."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x[3] = x[5]
    x[7, 2] = x[8, 2]
    return x


def test_the_cpu_kernels_are_the_compiled_ones():
    assert core.PDIST.kernel_for("cpu") is compiled.pdist
    assert core.PDIST_BACKWARD.kernel_for("cpu") is compiled.pdist_backward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", PS)
def test_matches_the_numpy_kernels(monkeypatch, dtype, p):
    x = rows(dtype)
    expected = core.PDIST.generic(np, x, p)
    grad = np.random.default_rng(1).standard_normal(expected.shape).astype(dtype)
    expected_grad = core.PDIST_BACKWARD.generic(np, grad, x, expected, p)
    monkeypatch.setattr(core.PDIST, "generic", no_fallback)
    monkeypatch.setattr(core.PDIST_BACKWARD, "generic", no_fallback)
    out = compiled.pdist(np, x, p)
    out_grad = compiled.pdist_backward(np, grad, x, expected, p)
    assert out.dtype == expected.dtype and out_grad.dtype == expected_grad.dtype
    if p in (0.0, float("inf")):  # counts and maxima: no sum to round
        np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(out, expected, **TOLERANCE[dtype])
    np.testing.assert_allclose(out_grad, expected_grad, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", PS)
def test_values_and_gradients_match_torch(dtype, p):
    x = rows(dtype, seed=2)
    e = ember.from_numpy(x.copy()).requires_grad_()
    t = torch.from_numpy(x.copy()).requires_grad_()
    out, expected = ember.nn.functional.pdist(e, p), torch.nn.functional.pdist(t, p)
    grad = np.random.default_rng(3).standard_normal(tuple(expected.shape)).astype(dtype)
    out.backward(ember.from_numpy(grad))
    expected.backward(torch.from_numpy(grad))
    tolerance = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tolerance)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tolerance)


def test_the_same_bits_every_call():
    x = rows(np.float32, (64, 33), seed=4)
    out = compiled.pdist(np, x, 2.0)
    grad = np.ones_like(out)
    first = compiled.pdist_backward(np, grad, x, out, 2.0)
    np.testing.assert_array_equal(compiled.pdist(np, x, 2.0), out)
    np.testing.assert_array_equal(compiled.pdist_backward(np, grad, x, out, 2.0), first)


@pytest.mark.parametrize("make", [
    lambda: rows(np.float32)[:, ::2],  # strided
    lambda: rows(np.float32).astype(np.float16),
    lambda: rows(np.float32)[:1],  # no pair
    lambda: np.zeros((4, 0), np.float32),  # rows of no components
], ids=["strided", "float16", "one-row", "no-columns"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, make):
    x = make()
    expected = core.PDIST.generic(np, x, 2.0)
    calls = numpy_kernel_calls(monkeypatch, core.PDIST)
    np.testing.assert_array_equal(compiled.pdist(np, x, 2.0), expected)
    assert calls == [core.PDIST.qualname]
