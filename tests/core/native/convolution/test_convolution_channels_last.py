"""Convolution in channels_last (ember/native/convolution/channels_last.py) against
torch and against ember's own NCHW kernels: outputs, the three gradients, and the
layouts (strides) of the output and of both gradients, for conv2d and
conv_transpose2d with stride, dilation, groups, depthwise, 1x1, batch 1, the padding
modes of nn.Conv2d, and inputs that are sliced or only suggest channels_last."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close, make_tensor

TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-9, atol=1e-10)}
FORMATS = {"input": (True, False), "weight": (False, True), "both": (True, True)}

# (input shape, weight shape, kwargs)
CONV_CASES = [
    ((2, 4, 7, 6), (5, 4, 3, 3), dict(padding=1)),
    ((2, 4, 9, 8), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ((1, 3, 8, 7), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(2, 1))),
    ((2, 4, 9, 8), (6, 2, 3, 3), dict(padding=2, dilation=2, groups=2)),
    ((2, 4, 9, 8), (8, 1, 3, 3), dict(padding=1, groups=4)),  # depthwise, channel multiplier 2
    ((2, 6, 5, 5), (4, 6, 1, 1), {}),  # 1x1: the image is its own rows
    ((2, 6, 5, 5), (4, 6, 1, 1), dict(stride=2)),
    ((1, 3, 5, 5), (2, 3, 5, 5), {}),  # one window
    ((2, 3, 4, 4), (2, 3, 3, 3), dict(padding=3)),  # taps that read only padding
]
TRANSPOSED_CASES = [
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 5, 6), (4, 3, 3, 3), dict(padding=1, groups=2, dilation=2)),
    ((2, 4, 4, 4), (4, 5, 1, 1), {}),
    ((2, 4, 5, 4), (4, 2, 3, 2), dict(dilation=2, output_padding=1, padding=(2, 0))),  # past the kernel
]


def channels_last(lib, t):
    return t.contiguous(memory_format=lib.channels_last)


def run(lib, op, x_np, w_np, b_np, formats, seed_np, kwargs, make_input=None):
    """The output and the (input, weight, bias) gradients of ``op`` in ``lib``."""
    x, w, b = (lib.tensor(a) for a in (x_np, w_np, b_np))
    x = channels_last(lib, x) if formats[0] else x
    w = channels_last(lib, w) if formats[1] else w
    for t in (x, w, b):
        t.requires_grad_()
    y = op(lib, make_input(x) if make_input else x, w, b, kwargs)
    grads = lib.autograd.grad(y, (x, w, b), channels_last(lib, lib.tensor(seed_np)))
    return y, grads


def assert_same_as_torch(op, x_shape, w_shape, kwargs, dtype, formats, make_input=None):
    x, w = make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1)
    b = make_tensor((w_shape[1] * kwargs.get("groups", 1) if op is conv_transpose else w_shape[0],), dtype, seed=2)
    make_input = make_input or (lambda x: x)
    shape = op(torch, make_input(torch.tensor(x)), torch.tensor(w), torch.tensor(b), kwargs).shape
    seed = np.random.default_rng(3).uniform(-1, 1, tuple(shape)).astype(dtype)
    y_t, grads_t = run(torch, op, x, w, b, formats, seed, kwargs, make_input)
    y_e, grads_e = run(ember, op, x, w, b, formats, seed, kwargs, make_input)
    assert_close(y_e, y_t, **TOLERANCE[dtype])
    assert y_e.stride() == y_t.stride()
    for name, g_e, g_t in zip(("input", "weight", "bias"), grads_e, grads_t):
        assert_close(g_e, g_t, **TOLERANCE[dtype], msg=f"grad of {name}: ")
        if name != "bias":
            assert g_e.is_contiguous(memory_format=ember.channels_last) == g_t.is_contiguous(
                memory_format=torch.channels_last), name
            assert g_e.is_contiguous() == g_t.is_contiguous(), name
    return y_e, grads_e, seed


def conv(lib, x, w, b, kwargs):
    return lib.nn.functional.conv2d(x, w, b, **kwargs)


def conv_transpose(lib, x, w, b, kwargs):
    return lib.nn.functional.conv_transpose2d(x, w, b, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV_CASES)
def test_conv2d_channels_last_matches_torch_and_the_nchw_path(dtype, fmt, x_shape, w_shape, kwargs):
    y, grads, seed = assert_same_as_torch(conv, x_shape, w_shape, kwargs, dtype, FORMATS[fmt])
    x, w = make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1)
    b = make_tensor(w_shape[:1], dtype, seed=2)
    y_nchw, grads_nchw = run(ember, conv, x, w, b, (False, False), seed, kwargs)
    assert y_nchw.is_contiguous()
    np.testing.assert_allclose(y.detach().numpy(), y_nchw.detach().numpy(), **TOLERANCE[dtype])
    for g, g_nchw in zip(grads, grads_nchw):
        np.testing.assert_allclose(g.numpy(), g_nchw.numpy(), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("x_shape, w_shape, kwargs", TRANSPOSED_CASES)
def test_conv_transpose2d_channels_last_matches_torch(dtype, fmt, x_shape, w_shape, kwargs):
    assert_same_as_torch(conv_transpose, x_shape, w_shape, kwargs, dtype, FORMATS[fmt])


@pytest.mark.parametrize("x_shape, make_input", [
    ((2, 4, 7, 8), lambda x: x[:, :, 1:, ::2]),  # a slice of channels_last memory: still suggests it
    ((2, 5, 7, 8), lambda x: x[:, 1:]),  # fewer channels of it
    ((2, 4, 7, 8), lambda x: x.permute(0, 1, 3, 2)),  # H and W swapped: dense, not NHWC
    ((2, 4, 7, 8), lambda x: x.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2)),  # NCWH memory
], ids=["sliced", "channel_slice", "permuted", "ncwh"])
@pytest.mark.parametrize("stored", ["channels_last", "contiguous"])
def test_non_contiguous_inputs_follow_torch(x_shape, make_input, stored):
    formats = (stored == "channels_last", False)
    assert_same_as_torch(conv, x_shape, (3, 4, 3, 3), dict(padding=1), "float64", formats, make_input)


def test_conv1d_never_channels_last():
    # A (N, C, L) tensor has no channels_last; PyTorch's conv1d output is contiguous.
    x = ember.randn(2, 3, 8).transpose(1, 2).contiguous().transpose(1, 2)
    y = ember.nn.functional.conv1d(x, ember.randn(4, 3, 3))
    assert y.is_contiguous()


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_layer_padding_modes_in_channels_last(padding_mode):
    torch.manual_seed(0)
    layer_t = torch.nn.Conv2d(4, 6, 3, padding=1, padding_mode=padding_mode).double()
    layer_e = ember.nn.Conv2d(4, 6, 3, padding=1, padding_mode=padding_mode).double()
    layer_e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in layer_t.state_dict().items()})
    layer_t.to(memory_format=torch.channels_last)
    layer_e.to(memory_format=ember.channels_last)
    x_np = make_tensor((2, 4, 6, 5), "float64")
    x_t = torch.tensor(x_np).contiguous(memory_format=torch.channels_last).requires_grad_()
    x_e = ember.tensor(x_np).contiguous(memory_format=ember.channels_last).requires_grad_()
    y_t, y_e = layer_t(x_t), layer_e(x_e)
    assert_close(y_e, y_t, **TOLERANCE["float64"])
    assert y_e.stride() == y_t.stride()
    y_t.sum().backward()
    y_e.sum().backward()
    assert_close(x_e.grad, x_t.grad, **TOLERANCE["float64"])
    assert_close(layer_e.weight.grad, layer_t.weight.grad, **TOLERANCE["float64"])


def test_double_backward_in_channels_last():
    x = ember.randn(2, 3, 5, 5, dtype=ember.float64).contiguous(memory_format=ember.channels_last)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64).contiguous(memory_format=ember.channels_last)
    x.requires_grad_()
    w.requires_grad_()
    assert ember.autograd.gradgradcheck(lambda x, w: ember.nn.functional.conv2d(x, w, padding=1, stride=2),
                                        (x, w))
