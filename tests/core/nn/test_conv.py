"""Convolution against torch: conv1d/conv2d/conv_transpose1d/2d (functional and the
Conv* layers): outputs, input/weight/bias gradients, strides, padding (ints, tuples,
'same', 'valid', padding modes), dilation, groups, output_padding, float32/float64,
non-contiguous inputs, unbatched inputs; gradcheck and double backward; errors."""

import math

import numpy as np
import pytest
import torch
from spatial_parity import TOLERANCE, check_layer, same_error

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close, assert_parity, make_tensor

FLOATS = ["float32", "float64"]

# (input shape, weight shape, kwargs)
CONV2D_CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 3), dict(padding=1)),
    ((1, 3, 7, 6), (4, 3, 3, 2), dict(stride=2)),
    ((2, 4, 9, 8), (6, 2, 3, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ((2, 4, 9, 8), (4, 1, 3, 3), dict(groups=4, padding="same")),  # depthwise
    ((2, 4, 9, 8), (8, 1, 5, 3), dict(groups=4, stride=3, padding=2)),  # depthwise, channel multiplier 2
    ((2, 3, 8, 7), (5, 3, 2, 4), dict(padding="same", dilation=(1, 2))),  # odd total: extra pad on the right
    ((2, 3, 5, 5), (2, 3, 5, 5), dict(padding="valid")),  # kernel as large as the input
    ((3, 2, 1, 9), (3, 2, 1, 3), dict(stride=(1, 4))),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's, not ours
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV2D_CASES)
def test_conv2d(dtype, x_shape, w_shape, kwargs):
    x, w = make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1)
    b = make_tensor(w_shape[:1], dtype, seed=2)
    assert_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kwargs), x, w, b, **TOLERANCE[dtype])
    assert_parity(lambda lib, x, w: lib.nn.functional.conv2d(x, w, **kwargs), x, w, **TOLERANCE[dtype])


CONV1D_CASES = [
    ((2, 4, 9), (6, 2, 3), dict(groups=2, stride=2, padding=1)),
    ((1, 3, 10), (5, 3, 4), dict(padding="same", dilation=2)),
    ((2, 3, 6), (2, 3, 6), {}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV1D_CASES)
def test_conv1d(dtype, x_shape, w_shape, kwargs):
    x, w = make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1)
    b = make_tensor(w_shape[:1], dtype, seed=2)
    assert_parity(lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, **kwargs), x, w, b, **TOLERANCE[dtype])


TRANSPOSED_CASES = [
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 5, 6), (4, 3, 3, 3), dict(padding=1, groups=2, dilation=2)),
    ((2, 4, 5, 6), (4, 3, 3, 2), dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 0), groups=2)),
    ((2, 2, 3, 3), (2, 5, 1, 1), {}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape, w_shape, kwargs", TRANSPOSED_CASES)
def test_conv_transpose2d(dtype, x_shape, w_shape, kwargs):
    x, w = make_tensor(x_shape, dtype), make_tensor(w_shape, dtype, seed=1)
    b = make_tensor((w_shape[1] * kwargs.get("groups", 1),), dtype, seed=2)
    assert_parity(lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(x, w, b, **kwargs), x, w, b,
                  **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_transpose1d(dtype):
    x, w, b = make_tensor((2, 4, 7), dtype), make_tensor((4, 3, 3), dtype, seed=1), make_tensor((6,), dtype, seed=2)
    assert_parity(lambda lib, x, w, b: lib.nn.functional.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                          output_padding=1, groups=2), x, w, b,
                  **TOLERANCE[dtype])


def test_noncontiguous_inputs():
    x, w, b = make_tensor((2, 3, 6, 7)), make_tensor((4, 3, 3, 3), seed=1), make_tensor((4,), seed=2)
    assert_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1, stride=2), x, w, b,
                  noncontiguous=True, **TOLERANCE["float32"])
    # A channels-last-like permuted view.
    assert_parity(lambda lib, x, w: lib.nn.functional.conv2d(x.permute(0, 3, 1, 2), w),
                  make_tensor((2, 6, 7, 3)), w, **TOLERANCE["float32"])


def test_unbatched_input():
    x, w = make_tensor((3, 6, 7)), make_tensor((4, 3, 3, 3), seed=1)
    assert_parity(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), x, w, **TOLERANCE["float32"])
    assert_parity(lambda lib, x, w: lib.nn.functional.conv1d(x[0], w[:, :, 0]), x, w, **TOLERANCE["float32"])


def test_output_is_contiguous():
    out = ember.nn.functional.conv2d(ember.randn(2, 3, 8, 8), ember.randn(4, 3, 3, 3), stride=2)
    assert out.is_contiguous()
    assert out.stride() == torch.empty(tuple(out.shape)).stride()


def test_integer_convolution():
    x, w = np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5), np.arange(4 * 3 * 2 * 2).reshape(4, 3, 2, 2) % 5
    expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w))
    assert_close(ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w)), expected)


def test_gradcheck():
    x = ember.tensor(make_tensor((1, 2, 5, 4), "float64")).requires_grad_()
    w = ember.tensor(make_tensor((4, 1, 3, 2), "float64", seed=1)).requires_grad_()
    b = ember.tensor(make_tensor((4,), "float64", seed=2)).requires_grad_()
    conv = ember.nn.functional.conv2d
    assert gradcheck(lambda x, w, b: conv(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2), (x, w, b))
    assert gradgradcheck(lambda x, w, b: conv(x, w, b, padding=1, groups=2), (x, w, b))
    wt = ember.tensor(make_tensor((2, 3, 3, 2), "float64", seed=3)).requires_grad_()
    bt = ember.tensor(make_tensor((3,), "float64", seed=4)).requires_grad_()
    convt = ember.nn.functional.conv_transpose2d
    assert gradcheck(lambda x, w, b: convt(x, w, b, stride=2, padding=1, output_padding=1), (x, wt, bt))
    assert gradgradcheck(lambda x, w, b: convt(x, w, b, stride=2, padding=(1, 0)), (x, wt, bt))


def test_gradcheck_1d():
    x = ember.tensor(make_tensor((2, 4, 7), "float64")).requires_grad_()
    w = ember.tensor(make_tensor((6, 2, 3), "float64", seed=1)).requires_grad_()
    wt = ember.tensor(make_tensor((4, 3, 3), "float64", seed=2)).requires_grad_()
    F = ember.nn.functional
    assert gradgradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1, groups=2), (x, w))
    assert gradgradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1), (x, wt))


@pytest.mark.parametrize("transposed", [False, True])
def test_double_backward_matches_torch(transposed):
    """A gradient penalty: d/dparams of |d loss / d x|^2, through the convolution's backward."""
    x = make_tensor((2, 4, 6, 5), "float64")
    w = make_tensor((4, 2, 3, 3), "float64", seed=1)
    b = make_tensor((4,), "float64", seed=2)
    results = []
    for lib in (ember, torch):
        F = lib.nn.functional
        xs, ws, bs = (lib.tensor(a).requires_grad_() for a in (x, w, b))
        if transposed:
            y = F.conv_transpose2d(xs, ws, bs, stride=2, padding=1, groups=2)
        else:
            y = F.conv2d(xs, ws, bs, stride=2, padding=1, groups=2)
        loss = (y * y.sin()).sum()
        (gx,) = lib.autograd.grad(loss, xs, create_graph=True)
        penalty = (gx * gx).sum()
        results.append(lib.autograd.grad(penalty, (xs, ws, bs), allow_unused=True))
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None or not bool(ours.ne(0).any())
        else:
            assert_close(ours, theirs, rtol=1e-7, atol=1e-9)


# --- layers ---------------------------------------------------------------------------

LAYER_CASES = [
    ("Conv2d", (3, 8, 3), dict(stride=2, padding=1), (2, 3, 9, 8)),
    ("Conv2d", (4, 6, (3, 2)), dict(padding="same", dilation=2, groups=2, bias=False), (1, 4, 7, 9)),
    ("Conv2d", (3, 4, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 3, 6, 7)),
    ("Conv2d", (3, 4, 3), dict(padding=2, padding_mode="replicate", stride=2), (2, 3, 6, 7)),
    ("Conv2d", (3, 4, (2, 3)), dict(padding="same", padding_mode="circular"), (2, 3, 6, 7)),
    ("Conv1d", (4, 6, 3), dict(stride=2, groups=2), (3, 4, 11)),
    ("Conv1d", (4, 4, 4), dict(padding="same", padding_mode="reflect"), (3, 4, 11)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 5, 4)),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=3, dilation=2), (2, 4, 5)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, args, kwargs, shape", LAYER_CASES)
def test_layer_matches_torch(dtype, name, args, kwargs, shape):
    ours, theirs = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    check_layer(ours, theirs, make_tensor(shape, dtype), dtype)


def test_default_init_bounds():
    """kaiming_uniform_(a=sqrt(5)) and the bias bound: both U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(8, 64, 3, groups=2)
    bound = 1 / math.sqrt(4 * 9)
    for p in (conv.weight, conv.bias):
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound
        assert values.max() > 0.9 * bound and values.min() < -0.9 * bound  # spread over the whole range
    transposed = ember.nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(transposed.weight.shape) == (4, 3, 3, 3)
    assert transposed.bias.detach().numpy().max() <= 1 / math.sqrt(3 * 9)


def test_conv_transpose_output_size():
    x = make_tensor((1, 4, 5, 5))
    ours, theirs = ember.nn.ConvTranspose2d(4, 2, 3, stride=2), torch.nn.ConvTranspose2d(4, 2, 3, stride=2)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    for size in ([12, 11], [1, 2, 12, 12]):
        assert_close(ours(ember.tensor(x), output_size=size), theirs(torch.from_numpy(x), output_size=size),
                     **TOLERANCE["float32"])
    with pytest.raises(ValueError):
        ours(ember.tensor(x), output_size=[14, 14])


def test_registry_and_create():
    assert ember.nn.Conv2d is ember.nn.modules.conv.Conv2d
    layer = ember.nn.create("Conv2d", in_channels=3, out_channels=5, kernel_size=3)
    assert tuple(layer.weight.shape) == (5, 3, 3, 3)


# --- errors ---------------------------------------------------------------------------

FUNCTIONAL_ERRORS = [
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 4, 5, 5), lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(3, 5, 5)[:2], lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5, 5), lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 2, 2), lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), groups=2),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 4, 5, 5), lib.zeros(6, 2, 3, 3), groups=4),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), lib.zeros(5)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5, dtype=lib.float64), lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), lib.zeros(6, dtype=lib.float64)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), stride=2, padding="same"),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), padding="foo"),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), stride=0),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), padding=-1),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), dilation=0),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(6, 3, 3, 3), groups=0),
    lambda lib: lib.nn.functional.conv1d(lib.zeros(2, 3, 5), lib.zeros(6, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 3, 5, 5), lib.zeros(4, 2, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 2, 3, 3), stride=2,
                                                   output_padding=2),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 2, 3, 3), groups=3),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 2, 3, 3), lib.zeros(3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 4, 5, 5), lib.zeros(4, 2, 3, 3), padding="same"),
]


@pytest.mark.parametrize("index", range(len(FUNCTIONAL_ERRORS)))
def test_functional_errors(index):
    same_error(FUNCTIONAL_ERRORS[index])


LAYER_ERRORS = [
    lambda lib: lib.nn.Conv2d(3, 4, 3, groups=0),
    lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2),
    lambda lib: lib.nn.Conv2d(4, 3, 3, groups=2),
    lambda lib: lib.nn.Conv2d(4, 4, 3, padding="full"),
    lambda lib: lib.nn.Conv2d(4, 4, 3, padding="same", stride=2),
    lambda lib: lib.nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
]


@pytest.mark.parametrize("index", range(len(LAYER_ERRORS)))
def test_layer_errors(index):
    # torch prints the valid padding strings as a Python set (order varies by hash seed),
    # and names its own class in the padding-mode message: compare the types only there.
    same_error(LAYER_ERRORS[index], message=index not in (3, 5))


def test_empty_batch():
    x, w = make_tensor((0, 4, 5, 5)), make_tensor((6, 2, 3, 3), seed=1)
    assert_parity(lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=2, stride=2), x, w)
    assert_parity(lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, padding=1), x,
                  make_tensor((4, 3, 3, 3), seed=1))
