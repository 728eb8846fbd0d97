"""The in-place SiLU and sigmoid kernels (NOTE [ One buffer per kernel ] in
plugins/activation/src/ember_activation/sigmoid_family.py) against torch and against the
expressions they replace: values and gradients in float32 and float64, NCHW and
channels_last (the layout is kept), non-contiguous inputs, extremes, an empty tensor, and
a gradient of another dtype."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close
from ember_activation import sigmoid_family

EXTREMES = np.array([-1e4, -100.0, -88.5, -20.0, -1e-8, 0.0, 1e-8, 20.0, 88.5, 100.0, 1e4, np.inf, -np.inf])


def _layouts(lib, x, layout):
    t = lib.tensor(x)
    if layout == "channels_last":
        return t.contiguous(memory_format=lib.channels_last)
    if layout == "noncontiguous":
        return t.transpose(2, 3)
    return t


@pytest.mark.parametrize("layout", ["nchw", "channels_last", "noncontiguous"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_silu_values_gradients_and_layout_match_torch(dtype, layout):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 5, 4)) * 6).astype(dtype)
    x.flat[:EXTREMES.size] = EXTREMES
    seed = rng.uniform(-1, 1, (2, 3, 5, 4)).astype(dtype)
    results = []
    for lib in (ember, torch):
        t = _layouts(lib, x, layout).requires_grad_()
        y = lib.nn.functional.silu(t)
        y.backward(_layouts(lib, seed, layout))
        results.append((y, t.grad))
    (y, grad), (t_y, t_grad) = results
    tolerance = dict(rtol=2e-6, atol=1e-30) if dtype == "float32" else dict(rtol=1e-14, atol=1e-300)
    assert_close(y, t_y, **tolerance)
    assert_close(grad, t_grad, **tolerance)
    assert y.stride() == t_y.stride()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernels_against_the_expressions_they_replace(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(200) * 10).astype(dtype)
    x[:EXTREMES.size] = EXTREMES
    grad = rng.uniform(-1, 1, 200).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1 / (1 + np.exp(-x))
        # the sigmoid and the backward: the same roundings, so the same bits
        np.testing.assert_array_equal(sigmoid_family._sigmoid(np, x), s)
        np.testing.assert_array_equal(sigmoid_family._silu_backward_kernel(np, grad, x),
                                      grad * (s * (1 + x * (1 - s))))
        # the forward divides (PyTorch's formula) where the old kernel multiplied by s
        np.testing.assert_array_equal(sigmoid_family._silu_kernel(np, x), x / (1 + np.exp(-x)))
        np.testing.assert_allclose(sigmoid_family._silu_kernel(np, x), x * s, rtol=4 * np.finfo(dtype).eps)


def test_a_gradient_of_another_dtype_or_shape_is_not_written_into_the_temporary():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    grad64 = np.ones((3, 4), np.float64)
    out = sigmoid_family._silu_backward_kernel(np, grad64, x)
    assert out.dtype == np.float64
    row = np.full((4,), 2.0, np.float32)
    broadcast = sigmoid_family._silu_backward_kernel(np, row, x)
    np.testing.assert_array_equal(broadcast, 2 * sigmoid_family._silu_backward_kernel(np, np.ones_like(x), x))


def test_empty_and_inplace():
    assert tuple(ember.nn.functional.silu(ember.zeros(0, 3)).shape) == (0, 3)
    x = np.linspace(-5, 5, 11, dtype=np.float32)
    e, t = ember.tensor(x), torch.tensor(x)
    ember.nn.functional.silu(e, inplace=True)
    torch.nn.functional.silu(t, inplace=True)
    assert_close(e, t, rtol=2e-6, atol=1e-30)
