"""The compiled row pick and row add of ember-numba's grid sampling
(``aten::_grid_sampler_take_rows``, ``aten::_grid_sampler_add_rows``) against the core's
NumPy kernels, bit for bit, and grid_sample through them against torch; the inputs that
go back to the NumPy kernels.

Tests for plugins/numba/src/ember_numba/grid_sampler_rows.py (PyTorch counterpart:
aten/src/ATen/native/cpu/GridSamplerKernel.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.native import grid_sampler as core
from ember_numba import grid_sampler_rows as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls


def test_the_cpu_kernels_are_the_compiled_ones():
    assert core.TAKE_ROWS.kernel_for("cpu") is compiled.take_rows
    assert core.ADD_ROWS.kernel_for("cpu") is compiled.add_rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 50, 5), (1, 7, 1), (2, 64, 16)])
def test_matches_the_numpy_kernels_bit_for_bit(monkeypatch, dtype, shape):
    rng = np.random.default_rng(sum(shape))
    table = values(rng, np.prod(shape), dtype).reshape(shape)
    position = rng.integers(0, shape[1], (shape[0], 2 * shape[1] + 3))  # repeats: the adds collide
    grad = values(rng, position.size * shape[2], dtype).reshape(position.shape + (shape[2],))
    expected = core.TAKE_ROWS.generic(np, table, position), core.ADD_ROWS.generic(np, grad, position, shape[1])
    monkeypatch.setattr(core.TAKE_ROWS, "generic", no_fallback)
    monkeypatch.setattr(core.ADD_ROWS, "generic", no_fallback)
    assert_same_bits([compiled.take_rows(np, table, position), compiled.add_rows(np, grad, position, shape[1])],
                     expected)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_sample_through_them_matches_torch(mode, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 7)).astype(dtype)
    grid = rng.uniform(-1.2, 1.2, (2, 5, 6, 2)).astype(dtype)
    ours = [ember.from_numpy(a.copy()).requires_grad_() for a in (x, grid)]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in (x, grid)]
    out = ember.nn.functional.grid_sample(*ours, mode=mode, padding_mode="border", align_corners=False)
    expected = torch.nn.functional.grid_sample(*theirs, mode=mode, padding_mode="border", align_corners=False)
    seed = rng.standard_normal(tuple(expected.shape)).astype(dtype)
    out.backward(ember.from_numpy(seed))
    expected.backward(torch.from_numpy(seed))
    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tolerance)
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), **tolerance)
    if mode != "nearest":  # nearest passes no gradient to the grid (zeros in torch, None here)
        np.testing.assert_allclose(ours[1].grad.numpy(), theirs[1].grad.numpy(), **tolerance)


@pytest.mark.parametrize("dtype, step", [(np.float32, 2), (np.float16, 1)], ids=["strided", "float16"])
def test_other_inputs_take_the_numpy_kernels(monkeypatch, dtype, step):
    table = np.arange(48, dtype=dtype).reshape(2, 6, 4)[:, ::step]
    position = np.array([[0, 2, 2], [1, 0, 2]])
    grad = np.arange(24, dtype=dtype).reshape(2, 3, 4)[:, :, ::step]
    take_calls = numpy_kernel_calls(monkeypatch, core.TAKE_ROWS)
    add_calls = numpy_kernel_calls(monkeypatch, core.ADD_ROWS)
    np.testing.assert_array_equal(compiled.take_rows(np, table, position), table[np.arange(2)[:, None], position])
    compiled.add_rows(np, grad, position, 3)
    assert take_calls == [core.TAKE_ROWS.qualname] and add_calls == [core.ADD_ROWS.qualname]
