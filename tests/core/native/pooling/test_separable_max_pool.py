"""Stride-1 max pooling (the separable kernel, ember/native/pooling/separable_max_pool.py) and max
pooling without indices (``aten::max_pool2d``) against torch and against the tap-by-tap
kernel they replace: values, indices, strides and input gradients; float32, float64 and
integers; NCHW and channels_last; kernels 1 to 5, padding, dilation, ceil_mode, odd and
one-pixel sizes, batch 1, an empty batch, non-contiguous inputs; ties, NaN and all -inf
windows."""

import numpy as np
import pytest
import torch

import ember
from ember.native.pooling import pooling, separable_max_pool
from ember.testing import assert_close
from ember.testing.parity import noncontiguous

# (kernel_size, stride, padding, dilation, ceil_mode): stride 1 takes the separable kernel
WINDOWS = [
    (1, 1, 0, 1, False),
    (2, 1, 0, 1, False),
    (2, 1, 1, 1, True),
    (3, 1, 1, 1, False),
    (3, 1, 1, 2, True),
    (5, 1, 2, 1, False),  # SPPF's pool
    ((3, 5), 1, (0, 2), (2, 1), False),
    (3, 2, 1, 1, False),  # other strides: the tap-by-tap kernel (with and without indices)
    ((2, 3), (2, 1), (1, 0), 1, True),
]

SHAPES = [(2, 3, 7, 9), (1, 4, 4, 4), (3, 2, 5, 1), (1, 1, 1, 6)]


def _as_lib(lib, x, channels_last, requires_grad=False):
    t = lib.tensor(x)
    if channels_last:
        t = t.contiguous(memory_format=lib.channels_last)
    return t.requires_grad_() if requires_grad else t


def _strides(t):
    """Strides of the dims longer than one (the others' strides carry no layout)."""
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1)


def _valid(shape, window):
    kernel, stride, padding, dilation, ceil_mode = window
    try:
        torch.nn.functional.max_pool2d(torch.zeros(shape), kernel, stride, padding, dilation, ceil_mode)
    except RuntimeError:
        return False
    return True


CASES = [(shape, window) for shape in SHAPES for window in WINDOWS if _valid(shape, window)]


def _ties_nan_and_infinities(shape, dtype, seed=0):
    """Rounded normals (many ties), a NaN and a row of -inf."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(shape) * 2).astype(dtype)
    x[0, 0, 0, -1] = np.nan
    x[-1, -1, -1, :] = -np.inf
    return x


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,window", CASES)
def test_values_indices_and_gradient_match_torch(shape, window, dtype, channels_last):
    x = _ties_nan_and_infinities(shape, dtype)
    seed = np.random.default_rng(1).uniform(-1, 1, torch.nn.functional.max_pool2d(
        torch.tensor(x), *window).shape).astype(dtype)
    results = {}
    for lib in (ember, torch):
        t = _as_lib(lib, x, channels_last, requires_grad=True)
        out, indices = lib.nn.functional.max_pool2d(t, *window, return_indices=True)
        out.backward(lib.tensor(seed))
        with lib.no_grad():
            values = lib.nn.functional.max_pool2d(t, *window)
        results[lib] = out, indices, t.grad, values
    (out, indices, grad, values), (t_out, t_indices, t_grad, t_values) = results[ember], results[torch]
    assert_close(out, t_out)
    assert_close(indices, t_indices)
    assert_close(values, t_values)
    assert_close(grad, t_grad)
    for ours, theirs in ((out, t_out), (indices, t_indices), (values, t_values), (grad, t_grad)):
        assert _strides(ours) == _strides(theirs)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_inputs_including_the_minimum(dtype):
    x = np.random.default_rng(0).integers(-5, 5, (2, 3, 6, 7)).astype(dtype)
    x[1, 2] = np.iinfo(dtype).min  # a plane where padding and pixels tie
    for window in WINDOWS:
        expected = torch.nn.functional.max_pool2d(torch.tensor(x), *window, return_indices=True)
        actual = ember.nn.functional.max_pool2d(ember.tensor(x), *window, return_indices=True)
        assert_close(actual[0], expected[0])
        assert_close(actual[1], expected[1])
        assert_close(ember.nn.functional.max_pool2d(ember.tensor(x), *window), expected[0])


def test_all_minus_infinity_windows_point_inside_the_image():
    """PyTorch's argmax starts at the window's first tap inside the image: a window of
    only -inf (and padding) gives that tap, never a negative or padding index."""
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    x[0, 0, 3, 3] = 1
    for window in [(3, 1, 1, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 2, False)]:
        expected = torch.nn.functional.max_pool2d(torch.tensor(x), *window, return_indices=True)[1]
        actual = ember.nn.functional.max_pool2d(ember.tensor(x), *window, return_indices=True)[1]
        assert_close(actual, expected)


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
def test_noncontiguous_input(channels_last):
    x = noncontiguous(np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype(np.float32))
    outputs = []
    for lib in (ember, torch):
        t = lib.tensor(x)[..., ::2, 1:]  # a strided view
        if channels_last:
            t = t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)[:, :, 1:]
        with lib.no_grad():
            outputs.append((lib.nn.functional.max_pool2d(t, 3, 1, 1),
                            lib.nn.functional.max_pool2d(t, 3, 1, 1, return_indices=True)))
    (values, (out, indices)), (t_values, (t_out, t_indices)) = outputs
    assert_close(values, t_values)
    assert_close(out, t_out)
    assert_close(indices, t_indices)
    assert _strides(values) == _strides(t_values)


def test_empty_batch_and_max_pool1d():
    for lib_input in ((0, 3, 5, 5),):
        expected = torch.nn.functional.max_pool2d(torch.zeros(lib_input), 3, 1, 1, return_indices=True)
        actual = ember.nn.functional.max_pool2d(ember.zeros(lib_input), 3, 1, 1, return_indices=True)
        assert tuple(actual[0].shape) == tuple(expected[0].shape)
        assert tuple(ember.nn.functional.max_pool2d(ember.zeros(lib_input), 3, 1, 1).shape) == tuple(expected[0].shape)
    x = np.random.default_rng(0).standard_normal((2, 3, 11)).astype(np.float64)
    for kwargs in (dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=2, stride=1, dilation=3)):
        expected = torch.nn.functional.max_pool1d(torch.tensor(x), **kwargs, return_indices=True)
        actual = ember.nn.functional.max_pool1d(ember.tensor(x), **kwargs, return_indices=True)
        assert_close(actual[0], expected[0])
        assert_close(actual[1], expected[1])
        assert_close(ember.nn.functional.max_pool1d(ember.tensor(x[0]), **kwargs),
                     torch.nn.functional.max_pool1d(torch.tensor(x[0]), **kwargs))


def test_inference_runs_the_op_without_indices_and_training_the_one_with():
    """NOTE [ Max pooling without indices ]: which op the graph and a trace see. A graph
    traced without gradients and replayed with them still differentiates (the op finds
    its argmax again)."""
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    e = ember.tensor(x, requires_grad=True)
    with ember.no_grad():
        assert ember.nn.functional.max_pool2d(e, 3, 1, 1).grad_fn is None
    assert ember.nn.functional.max_pool2d(e, 3, 1, 1).grad_fn.name() == "MaxPool2dWithIndicesBackward0"
    traced = ember.jit.trace(lambda t: ember.nn.functional.max_pool2d(t, 3, 1, 1), ember.tensor(x))
    assert "aten::max_pool2d]" in str(traced.graph)
    traced(e).sum().backward()
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(t, 3, 1, 1).sum().backward()
    assert_close(e.grad, t.grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_op_without_indices_has_a_gradient_when_called_directly(dtype):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5)).astype(dtype)
    attrs = dict(kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), ceil_mode=False)
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(t, 3, 1, 1).sum().backward()
    e = ember.tensor(x, requires_grad=True)
    pooling.MAX_POOL2D_VALUES(e, **attrs).sum().backward()
    assert_close(e.grad, t.grad)


STRIDE_1 = [w for w in WINDOWS if w[1] == 1]


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("window", STRIDE_1)
def test_both_separable_strategies_agree_with_the_tap_by_tap_kernel(window, channels_last):
    """Edge slices and flat shifts (NOTE [ Separable max pooling ]), whichever the size
    would choose, against the tap-by-tap kernel they replace at stride 1."""
    kernel, stride, padding, dilation = (pooling._pair(v) for v in window[:4])
    x = _ties_nan_and_infinities((2, 3, 7, 9), np.float64, seed=3)
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    g = pooling._pool_geometry(x.shape, kernel, stride, padding, dilation, window[4])
    fill = -np.inf
    values, taps = pooling._max_by_taps(np, x, g, fill)
    inside = values != fill  # the tap-by-tap indices of all -inf windows are fixed afterwards
    for name in ("_edge", "_flat"):
        best, row_tap, column_tap = getattr(separable_max_pool, name + "_values_and_taps")(np, x, g, fill)
        np.testing.assert_array_equal(best, values)
        np.testing.assert_array_equal(getattr(separable_max_pool, name + "_values")(np, x, g, fill), values)
        tap_offsets = (row_tap.astype(np.int64) * g.dh * g.W + column_tap * g.dw)
        starts = (np.arange(g.OH)[:, None] - g.ph) * g.W + np.arange(g.OW) - g.pw
        np.testing.assert_array_equal((tap_offsets + starts)[inside], taps[inside])


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("window", [(5, 1, 2, 1, False), (3, 2, 1, 1, True), ((2, 3), 1, (1, 0), 2, False)])
def test_backward_adds_every_share_as_torch_and_the_scatter_path(window, channels_last):
    """The bincount backward, where overlapping windows send several shares to one pixel:
    float64 sums equal torch's bit for bit, and the scatter_add path of adaptive pooling."""
    x = np.round(np.random.default_rng(5).standard_normal((3, 4, 6, 7)))  # ties: pixels picked often
    seed = np.random.default_rng(6).uniform(-1, 1, torch.nn.functional.max_pool2d(torch.tensor(x), *window).shape)
    grads = []
    for lib in (ember, torch):
        t = _as_lib(lib, x, channels_last, requires_grad=True)
        out, indices = lib.nn.functional.max_pool2d(t, *window, return_indices=True)
        out.backward(_as_lib(lib, seed, channels_last))
        grads.append(t.grad)
    np.testing.assert_array_equal(grads[0].numpy(), grads[1].numpy())
    assert _strides(grads[0]) == _strides(grads[1])
    e = _as_lib(ember, x, channels_last)
    _, indices = ember.nn.functional.max_pool2d(e, *window, return_indices=True)
    scattered = pooling._scatter_to_planes(_as_lib(ember, seed, channels_last), indices, tuple(x.shape))
    np.testing.assert_allclose(grads[0].numpy(), scattered.numpy(), rtol=1e-15, atol=1e-15)
