"""conv3d and conv_transpose3d (vol2col, ember/native/convolution/volumes.py) and nn.Conv3d /
nn.ConvTranspose3d against torch: values, the input, weight and bias gradients, double
backward, float32 and float64, batched and unbatched, non-contiguous inputs, padding modes."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

CASES = [  # (input shape, weight shape, kwargs)
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), {}),
    ((2, 4, 6, 5, 7), (6, 2, 2, 3, 1), {"stride": (2, 1, 3), "padding": (1, 0, 2), "groups": 2}),
    ((1, 2, 7, 7, 7), (3, 2, 3, 3, 3), {"dilation": 2, "padding": 1, "stride": 2}),
    ((3, 4, 5, 5), (2, 3, 2, 2, 2), {"padding": "same"}),  # unbatched
    ((1, 2, 4, 5, 6), (2, 2, 1, 1, 1), {}),
]
TRANSPOSED_CASES = [
    ((2, 3, 3, 4, 5), (3, 4, 3, 3, 3), {}),
    ((2, 4, 3, 4, 3), (4, 3, 2, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((1, 2, 3, 3, 3), (2, 2, 3, 2, 3), {"stride": (3, 1, 2), "dilation": (1, 2, 1), "output_padding": (2, 0, 1)}),
    ((2, 3, 4, 4), (2, 3, 2, 2, 2), {"stride": 2}),  # unbatched
]


def _run(name, x_shape, w_shape, kwargs, dtype, bias=True, transpose_input=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    out_channels = w_shape[1] * kwargs.get("groups", 1) if "transpose" in name else w_shape[0]
    b = rng.standard_normal(out_channels).astype(dtype)
    tensors = {}
    for lib in (ember, torch):
        xt = lib.tensor(x)
        if transpose_input:  # a non-contiguous input of the same values
            xt = lib.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2))).transpose(-1, -2)
        leaves = [xt.requires_grad_(), lib.tensor(w, requires_grad=True)]
        if bias:
            leaves.append(lib.tensor(b, requires_grad=True))
        out = getattr(lib.nn.functional, name)(*leaves, **kwargs)
        cotangent = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype)) if lib is ember else None
        tensors[lib] = (out, leaves, cotangent)
    e_out, e_leaves, cotangent = tensors[ember]
    t_out, t_leaves, _ = tensors[torch]
    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == np.float32 else {}
    assert_close(e_out, t_out, **tol)
    e_grads = ember.autograd.grad(e_out, e_leaves, cotangent)
    t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(cotangent.numpy()))
    for e, t in zip(e_grads, t_grads):
        assert_close(e, t, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape,w_shape,kwargs", CASES)
def test_conv3d(x_shape, w_shape, kwargs, dtype):
    _run("conv3d", x_shape, w_shape, kwargs, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape,w_shape,kwargs", TRANSPOSED_CASES)
def test_conv_transpose3d(x_shape, w_shape, kwargs, dtype):
    _run("conv_transpose3d", x_shape, w_shape, kwargs, dtype)


@pytest.mark.parametrize("name,case", [("conv3d", CASES[1]), ("conv_transpose3d", TRANSPOSED_CASES[1])])
def test_without_bias_and_non_contiguous(name, case):
    _run(name, *case, np.float64, bias=False, transpose_input=True)


@pytest.mark.parametrize("name,case", [("conv3d", CASES[1]), ("conv_transpose3d", TRANSPOSED_CASES[2])])
def test_double_backward(name, case):
    x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    results = {}
    for lib in (ember, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = getattr(lib.nn.functional, name)(xt, wt, **kwargs)
        gx, gw = lib.autograd.grad((out * out).sum(), [xt, wt], create_graph=True)
        results[lib] = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), [xt, wt])
    for e, t in zip(results[ember], results[torch]):
        assert_close(e, t)


def test_empty_batch():
    e = ember.nn.functional.conv3d(ember.zeros(0, 2, 4, 4, 4), ember.ones(3, 2, 2, 2, 2))
    t = torch.nn.functional.conv3d(torch.zeros(0, 2, 4, 4, 4), torch.ones(3, 2, 2, 2, 2))
    assert tuple(e.shape) == tuple(t.shape)


@pytest.mark.parametrize("call", [
    lambda F, lib: F.conv3d(lib.ones(1, 2, 4, 4, 4), lib.ones(3, 2, 2, 2), stride=(1, 1)),
    lambda F, lib: F.conv3d(lib.ones(1, 2, 4, 4, 4), lib.ones(3, 3, 2, 2, 2)),
    lambda F, lib: F.conv3d(lib.ones(1, 2, 1, 4, 4), lib.ones(3, 2, 2, 2, 2)),
    lambda F, lib: F.conv3d(lib.ones(2, 4, 4, 4, 4, 4), lib.ones(3, 2, 2, 2, 2)),
    lambda F, lib: F.conv3d(lib.ones(1, 2, 4, 4, 4), lib.ones(3, 2, 2, 2, 2), stride=(1, 2)),
])
def test_errors_like_torch(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(RuntimeError) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)


def _copy_parameters(e_module, t_module):
    for name, parameter in t_module.named_parameters():
        getattr(e_module, name).data = ember.tensor(parameter.detach().numpy())


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_module(padding_mode):
    kwargs = dict(kernel_size=(3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 2), groups=2, padding_mode=padding_mode)
    e_module, t_module = ember.nn.Conv3d(4, 6, **kwargs), torch.nn.Conv3d(4, 6, **kwargs)
    _copy_parameters(e_module, t_module)
    assert repr(e_module) == repr(t_module)
    x = np.random.default_rng(2).standard_normal((2, 4, 5, 6, 7)).astype(np.float32)
    e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e_out, t_out = e_module(e_x), t_module(t_x)
    assert_close(e_out, t_out, atol=1e-5, rtol=1e-4)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(e_x.grad, t_x.grad, atol=1e-5, rtol=1e-4)
    assert_close(e_module.weight.grad, t_module.weight.grad, atol=1e-4, rtol=1e-4)


def test_conv_transpose3d_module_output_size():
    kwargs = dict(kernel_size=3, stride=2, padding=1)
    e_module, t_module = ember.nn.ConvTranspose3d(3, 2, **kwargs), torch.nn.ConvTranspose3d(3, 2, **kwargs)
    _copy_parameters(e_module, t_module)
    assert repr(e_module) == repr(t_module)
    x = np.random.default_rng(3).standard_normal((1, 3, 3, 4, 5)).astype(np.float32)
    e_out = e_module(ember.tensor(x), output_size=(6, 8, 9))
    t_out = t_module(torch.tensor(x), output_size=(6, 8, 9))
    assert_close(e_out, t_out, atol=1e-5, rtol=1e-4)
    assert tuple(e_module.weight.shape) == (3, 2, 3, 3, 3)
