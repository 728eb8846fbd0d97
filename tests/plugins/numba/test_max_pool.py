"""The compiled channels_last max pooling of ember-numba (the values-only
``aten::max_pool2d``) against torch and against the core's NumPy kernel on the same
arrays: float32 and float64, windows with stride, padding, dilation and ceil_mode, odd
shapes, ties, NaN and -inf, and the inputs that go back to the NumPy kernel.

Tests for plugins/numba/src/ember_numba/max_pool.py (PyTorch counterpart:
aten/src/ATen/native/cpu/MaxPoolKernel.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.native.pooling.pooling import MAX_POOL2D_VALUES
from ember_numba import max_pool as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

# (kernel, stride, padding, dilation, ceil_mode)
WINDOWS = [(5, 1, 2, 1, False), (3, 2, 1, 1, False), (2, 2, 0, 1, False), ((3, 2), (2, 1), (1, 0), 1, False),
           (3, 2, 1, 2, False), (3, 2, 0, 1, True), (1, 1, 0, 1, False)]
SHAPES = [(2, 5, 4, 4), (3, 7, 9, 6), (1, 3, 3, 5), (2, 16, 8, 8)]


def channels_last(array):
    return np.ascontiguousarray(array.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def values(shape, dtype, seed, special=True):
    """Channels_last values with ties (rounded to halves) and, in front, NaN, -inf, inf
    and zeros of both signs."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(shape) * 2) / 2
    if special:
        flat = x.reshape(-1)
        flat[:6] = [np.nan, -np.inf, np.inf, 0.0, -0.0, np.nan][:flat.size]
        rng.shuffle(flat)
    return channels_last(x.astype(dtype))


def pool_args(window):
    kernel, stride, padding, dilation, ceil_mode = window
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    return pair(kernel), pair(stride), pair(padding), pair(dilation), ceil_mode


def torch_pool(x, window):
    kernel, stride, padding, dilation, ceil_mode = pool_args(window)
    return torch.nn.functional.max_pool2d(torch.from_numpy(x), kernel, stride, padding, dilation, ceil_mode)


def test_the_cpu_kernel_is_the_compiled_one():
    assert MAX_POOL2D_VALUES.kernel_for("cpu") is compiled.max_pool2d


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("window", WINDOWS)
def test_matches_torch_bit_for_bit_and_keeps_channels_last(monkeypatch, dtype, shape, window):
    monkeypatch.setattr(MAX_POOL2D_VALUES, "generic", no_fallback)
    x = values(shape, dtype, seed=sum(shape))
    expected = torch_pool(x, window)
    out = compiled.max_pool2d(np, x, *pool_args(window))
    assert out.shape == tuple(expected.shape) and out.strides == expected.numpy().strides
    assert_same_bits([out], [expected.numpy()])  # greater-or-NaN, as torch: ties keep the first, so -0 or 0 too


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("window", WINDOWS)
def test_matches_the_numpy_kernel(dtype, window):
    x = values((3, 6, 7, 5), dtype, seed=7, special=False)
    out, expected = compiled.max_pool2d(np, x, *pool_args(window)), MAX_POOL2D_VALUES.generic(np, x, *pool_args(window))
    np.testing.assert_array_equal(out, expected)
    assert out.strides == expected.strides


def test_the_module_takes_it_in_inference(monkeypatch):
    monkeypatch.setattr(MAX_POOL2D_VALUES, "generic", no_fallback)
    x = values((2, 8, 6, 6), np.float32, seed=3, special=False)
    with ember.no_grad():
        out = ember.nn.MaxPool2d(5, 1, 2)(ember.from_numpy(x))
    assert out.is_contiguous(memory_format=ember.channels_last)
    np.testing.assert_array_equal(out.numpy(), torch.nn.MaxPool2d(5, 1, 2)(torch.from_numpy(x)).numpy())


@pytest.mark.parametrize("make", [
    lambda: np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32),  # NCHW
    lambda: channels_last(np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float16)),
    lambda: channels_last(np.arange(150, dtype=np.int64).reshape(2, 3, 5, 5)),
    lambda: channels_last(np.zeros((2, 6, 5, 5), np.float32))[:, ::2],  # gaps between channels
    lambda: channels_last(np.zeros((0, 3, 5, 5), np.float32)),
], ids=["nchw", "float16", "int64", "strided", "empty"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, make):
    x = make()
    args = pool_args((3, 2, 1, 1, False))
    expected = MAX_POOL2D_VALUES.generic(np, x, *args)
    calls = numpy_kernel_calls(monkeypatch, MAX_POOL2D_VALUES)
    np.testing.assert_array_equal(compiled.max_pool2d(np, x, *args), expected)
    assert calls == [MAX_POOL2D_VALUES.qualname]


def test_gradients_still_take_the_op_with_indices():
    x = values((2, 4, 6, 6), np.float32, seed=5, special=False)
    t = torch.from_numpy(x).requires_grad_()
    e = ember.from_numpy(x.copy()).requires_grad_()
    torch.nn.functional.max_pool2d(t, 3, 2, 1).sum().backward()
    ember.nn.functional.max_pool2d(e, 3, 2, 1).sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
