"""The compiled batch-norm kernels of ember-numba (which InstanceNorm takes through its
(1, N*C, *) view) against torch and against ember-norm's NumPy kernels on the same
arrays: training and evaluation, values and gradients, float32 and float64, odd
shapes, channels far from zero, NaN and infinity, and the layouts that go back to the
NumPy kernel.

Tests for plugins/numba/src/ember_numba/batch_norm.py (PyTorch counterpart:
aten/src/ATen/native/cpu/batch_norm_kernel.cpp, v2.13).
"""

import numpy as np
import pytest

from ember.testing import assert_parity, make_tensor
from ember_norm.ops import batch_norm as ops
from ember_numba import batch_norm as compiled
from tests.plugins.numba.test_layer_norm import TOLERANCES, assert_same, numpy_and_compiled, numpy_kernel_calls

# (N, C, *): images, a 3-d volume, no spatial dims, one sample, one value per channel
SHAPES = [(8, 5, 6, 7), (2, 3, 2, 3, 5), (9, 4), (1, 6, 13), (1, 3, 1)]


def batch_norm(training, dtype):
    """``fn(lib, x, w, b)`` for assert_parity: the output and the running statistics,
    which start from the same values in both libraries (and require no grad)."""
    running = channel_arrays(1, dtype)[2:]

    def run(lib, x, w, b):
        running_mean, running_var = (lib.tensor(np.repeat(a, x.shape[1])) for a in running)
        out = lib.nn.functional.batch_norm(x, running_mean, running_var, w, b, training=training)
        return out, running_mean, running_var
    return run


def channel_arrays(channels, dtype):
    """weight, bias, running mean and running variance (positive)."""
    return (make_tensor((channels,), dtype, seed=1), make_tensor((channels,), dtype, seed=2),
            make_tensor((channels,), dtype, seed=3), make_tensor((channels,), dtype, low=0.5, high=2.0, seed=4))


def affine(channels, dtype):
    return channel_arrays(channels, dtype)[:2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES[:4])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch(dtype, shape, training):
    x = make_tensor(shape, dtype, seed=0)
    tol = TOLERANCES[dtype]
    assert_parity(batch_norm(training, dtype), x, *affine(shape[1], dtype), **tol, grad_rtol=tol["rtol"],
                  grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 6, 5, 7), (3, 2, 9), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm_matches_torch(dtype, shape, affine):
    x = make_tensor(shape, dtype, seed=5)
    tol = TOLERANCES[dtype]
    if affine:
        w, b = make_tensor(shape[1:2], dtype, seed=1), make_tensor(shape[1:2], dtype, seed=2)
        assert_parity(lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b), x, w, b, **tol,
                      grad_rtol=tol["rtol"], grad_atol=tol["atol"])
    else:
        assert_parity(lambda lib, x: lib.nn.functional.instance_norm(x), x, **tol, grad_rtol=tol["rtol"],
                      grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_each_kernel_matches_the_numpy_kernel(dtype, shape, affine, training):
    x, g = make_tensor(shape, dtype, seed=6), make_tensor(shape, dtype, seed=7)
    w, b, running_mean, running_var = channel_arrays(shape[1], dtype)
    if not affine:
        w = b = None
    assert_three_kernels_agree(x, g, w, b, running_mean, running_var, training, dtype)


def assert_three_kernels_agree(x, g, w, b, running_mean, running_var, training, dtype):
    """Statistics, forward and backward, compiled against NumPy on the same arrays;
    returns the (NumPy, compiled) results of the forward and of the backward."""
    expected, actual = numpy_and_compiled(ops.batch_norm_stats, compiled.batch_norm_stats, x, eps=1e-5)
    assert_same(expected, actual, dtype)
    mean, invstd = expected[:2] if training else (running_mean, 1 / np.sqrt(running_var + 1e-5))
    forward = numpy_and_compiled(ops.batch_norm, compiled.batch_norm, x, w, b, mean, invstd,
                                 training=training, eps=1e-5)
    assert_same([forward[0]], [forward[1]], dtype)
    backward = numpy_and_compiled(ops.batch_norm_backward, compiled.batch_norm_backward, g, x, w, mean, invstd,
                                  training=training)
    assert_same(*backward, dtype)
    return forward, backward


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channels_far_from_zero_match_torch(dtype):
    # |mean| 1e4 times the spread: the statistics take two passes over each channel and
    # the backward's sums are centered.
    x = (1e3 + 1e-1 * make_tensor((6, 3, 5, 4), "float64", seed=8)).astype(dtype)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float32" else dict(rtol=1e-8, atol=1e-8)
    assert_parity(batch_norm(True, dtype), x, *affine(3, dtype), **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_infinity_propagate_as_in_torch(dtype):
    x = make_tensor((4, 3, 5), dtype, seed=9)
    x[1, 0, 3] = np.nan
    x[2, 1, 1] = np.inf
    (out, _, _), _ = assert_parity(batch_norm(True, dtype), x, *affine(3, dtype), **TOLERANCES[dtype])
    nan = np.isnan(out.detach().numpy())
    assert nan[:, :2].all() and not nan[:, 2].any()


def channels_last(array):
    """The same values stored channels-last: (N, C, *) viewed over an (N, *, C) array."""
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(array, 1, -1)), -1, 1)


def channels_last_step(lib, x, grad, training, affine, dtype):
    """BatchNorm forward and backward on a channels_last input: output (and its
    layout), the running statistics and the gradients."""
    memory_format = lib.channels_last if x.ndim == 4 else lib.channels_last_3d
    params = [lib.tensor(a, requires_grad=True) for a in affine_arrays(x.shape[1], dtype)] if affine else [None] * 2
    running = [lib.tensor(a) for a in channel_arrays(x.shape[1], dtype)[2:]]
    tx = lib.tensor(x).contiguous(memory_format=memory_format).requires_grad_()
    out = lib.nn.functional.batch_norm(tx, *running, *params, training=training)
    out.backward(lib.tensor(grad).contiguous(memory_format=memory_format))
    grads = [t.grad for t in [tx] + params if t is not None]
    return out.is_contiguous(memory_format=memory_format), [out.detach(), *running, *grads]


def affine_arrays(channels, dtype):
    return channel_arrays(channels, dtype)[:2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5, 4, 7), (3, 4, 2, 3, 5), (1, 3, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_channels_last_matches_torch_and_keeps_its_layout(monkeypatch, dtype, shape, training, affine):
    import torch

    import ember

    calls = [numpy_kernel_calls(monkeypatch, op) for op in (ops.batch_norm_stats, ops.batch_norm,
                                                             ops.batch_norm_backward)]
    x, grad = make_tensor(shape, dtype, seed=12), make_tensor(shape, dtype, seed=13)
    ours_last, ours = channels_last_step(ember, x, grad, training, affine, dtype)
    theirs_last, theirs = channels_last_step(torch, x, grad, training, affine, dtype)
    assert ours_last and theirs_last and not any(calls)  # the compiled loops, no NumPy kernel
    for actual, expected in zip(ours, theirs):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), **TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("training", [True, False])
def test_channels_last_kernels_match_the_numpy_kernels(dtype, training):
    x, g = channels_last(make_tensor((5, 6, 3, 4), dtype, seed=14)), channels_last(make_tensor((5, 6, 3, 4), dtype,
                                                                                              seed=15))
    w, b, running_mean, running_var = channel_arrays(6, dtype)
    forward, backward = assert_three_kernels_agree(x, g, w, b, running_mean, running_var, training, dtype)
    assert forward[1].strides == forward[0].strides  # channels-last, as the NumPy kernel's
    assert backward[1][0].strides == backward[0][0].strides


def test_mixed_layouts_take_the_numpy_kernel(monkeypatch):
    # a channels_last input with an NCHW gradient: the backward goes to NumPy
    x, g = channels_last(make_tensor((4, 3, 5, 6), "float32", seed=16)), make_tensor((4, 3, 5, 6), "float32", seed=17)
    w = make_tensor((3,), "float32", seed=1)
    mean, invstd, _ = compiled.batch_norm_stats(ops.batch_norm_stats.generic, np, x, eps=1e-5)
    expected = ops.batch_norm_backward.generic(np, g, x, w, mean, invstd, training=True)
    calls = numpy_kernel_calls(monkeypatch, ops.batch_norm_backward)
    actual = compiled.batch_norm_backward(ops.batch_norm_backward.generic, np, g, x, w, mean, invstd, training=True)
    assert_same(expected, actual, "float32")
    assert len(calls) == 1


def test_noncontiguous_input_takes_the_numpy_kernel(monkeypatch):
    calls = [numpy_kernel_calls(monkeypatch, op) for op in (ops.batch_norm_stats, ops.batch_norm,
                                                             ops.batch_norm_backward)]
    x = make_tensor((4, 3, 6), "float32", seed=11)
    assert_parity(batch_norm(True, "float32"), x, *affine(3, "float32"), noncontiguous=True, **TOLERANCES["float32"])
    assert all(calls)


def test_empty_batch_matches_torch():
    x = make_tensor((0, 3, 4), "float32")
    assert_parity(batch_norm(True, "float32"), x, *affine(3, "float32"))


@pytest.mark.parametrize("training", [True, False])
def test_channels_last_nan_and_infinity_propagate_as_in_torch(training):
    import torch

    import ember

    x, grad = make_tensor((3, 4, 2, 5), "float64", seed=18), make_tensor((3, 4, 2, 5), "float64", seed=19)
    x[1, 0, 1, 3] = np.nan
    x[0, 2, 0, 0] = np.inf
    _, ours = channels_last_step(ember, x, grad, training, True, "float64")
    _, theirs = channels_last_step(torch, x, grad, training, True, "float64")
    for actual, expected in zip(ours, theirs):
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), **TOLERANCES["float64"])
