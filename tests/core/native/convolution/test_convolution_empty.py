"""Convolutions with nothing to convolve (ember/native/convolution/empty.py, NOTE [ A
convolution with nothing to convolve ]) against torch: an empty batch, no input
channels, or both; conv1d/2d and conv_transpose1d/2d, with and without bias, row-major
and channels_last inputs and weights: the output's shape and strides, the gradients'
values and strides, and torch's errors where torch refuses."""

import numpy as np
import pytest
import torch

import ember

# (input shape, weight shape of the plain convolution, keyword arguments)
CASES = [
    ((0, 4, 8, 8), (6, 4, 3, 3), {"padding": 1}),   # more output channels: row-major out
    ((0, 4, 8, 8), (4, 4, 3, 3), {"padding": 1}),   # same shape out: the input's layout
    ((0, 4, 8, 8), (4, 4, 3, 3), {}),               # smaller maps: row-major out
    ((0, 4, 8, 8), (4, 2, 3, 3), {"padding": 1, "groups": 2}),
    ((0, 4, 9, 9), (4, 4, 3, 3), {"stride": 2, "dilation": 2}),
    ((2, 0, 5, 5), (3, 0, 3, 3), {}),               # no input channels: no output channels
    ((2, 0, 5, 5), (4, 0, 3, 3), {"groups": 2}),
    ((0, 0, 5, 5), (3, 0, 3, 3), {"padding": 1}),
]


def _transposed_weight(shape, groups):
    return (shape[1] * groups, shape[0] // groups) + shape[2:]


def _run(lib, fn, x_shape, w_shape, kwargs, bias, x_channels_last, w_channels_last, dtype):
    dtype = getattr(lib, dtype)
    x = lib.zeros(x_shape, dtype=dtype)
    # (torch keeps the all-zero strides of an empty NumPy array; zeros() has torch's own)
    w = lib.zeros(w_shape, dtype=dtype) if 0 in w_shape else \
        lib.tensor(np.random.default_rng(0).standard_normal(w_shape), dtype=dtype)
    if x_channels_last:
        x = x.contiguous(memory_format=lib.channels_last)
    if w_channels_last:
        w = w.contiguous(memory_format=lib.channels_last)
    x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
    out_channels = w_shape[1] * kwargs.get("groups", 1) if "transpose" in fn else w_shape[0]
    b = lib.ones(out_channels, dtype=dtype, requires_grad=True) if bias else None
    out = getattr(lib.nn.functional, fn)(x, w, b, **kwargs)
    (out * 2).sum().backward()
    grads = [(tuple(t.grad.shape), t.grad.stride(), t.grad.tolist()) for t in (x, w, b) if t is not None]
    return tuple(out.shape), out.stride(), out.dtype is dtype, grads


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("w_channels_last", [False, True])
@pytest.mark.parametrize("x_channels_last", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case, transposed", [(case, transposed) for case in CASES for transposed in (False, True)
                                               if not (transposed and case[0][1] == 0)])  # refused: below
def test_empty_convolution_2d_as_torch(case, transposed, bias, x_channels_last, w_channels_last, dtype):
    x_shape, w_shape, kwargs = case
    fn = "conv_transpose2d" if transposed else "conv2d"
    if transposed:
        w_shape = _transposed_weight(w_shape, kwargs.get("groups", 1))
    args = (fn, x_shape, w_shape, kwargs, bias, x_channels_last, w_channels_last, dtype)
    assert _run(ember, *args) == _run(torch, *args)


@pytest.mark.parametrize("fn, x_shape, w_shape, kwargs", [
    ("conv1d", (0, 4, 8), (4, 4, 3), {"padding": 1}),
    ("conv1d", (0, 4, 8), (6, 4, 3), {}),
    ("conv1d", (2, 0, 8), (3, 0, 3), {"stride": 2}),
    ("conv_transpose1d", (0, 4, 8), (4, 6, 3), {"stride": 2}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty_convolution_1d_as_torch(fn, x_shape, w_shape, kwargs, dtype):
    args = (fn, x_shape, w_shape, kwargs, True, False, False, dtype)
    assert _run(ember, *args) == _run(torch, *args)


def test_the_input_layout_of_an_empty_batch_survives_a_same_shape_convolution():
    # The case that first showed the difference: a padded 3x3 convolution of an empty
    # channels_last batch stays channels_last, as in torch.
    x = ember.randn(0, 4, 8, 8).contiguous(memory_format=ember.channels_last)
    out = ember.nn.functional.conv2d(x, ember.randn(4, 4, 3, 3), padding=1)
    assert out.stride() == (256, 1, 32, 4) and out.is_contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.functional.conv_transpose2d(lib.randn(2, 0, 5, 5), lib.randn(0, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.randn(2, 0, 5, 5), lib.randn(0, 0, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.randn(2, 3, 0, 5), lib.randn(3, 3, 1, 1)),
    # A transposed convolution takes an empty batch or no channels, never an empty image.
    lambda lib: lib.nn.functional.conv_transpose2d(lib.randn(1, 2, 0, 3), lib.randn(2, 3, 2, 2)),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.randn(2, 0), lib.randn(2, 3, 2)),
])
def test_what_torch_refuses_is_refused_with_its_message(program):
    with pytest.raises(RuntimeError) as torch_error:
        program(torch)
    with pytest.raises(RuntimeError) as ember_error:
        program(ember)
    assert str(ember_error.value) == str(torch_error.value).replace("torch", "ember")
