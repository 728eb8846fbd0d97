"""F.pad and the padding layers (1-D, 2-D, 3-D) against torch: constant (with value), reflect,
replicate and circular, negative pads, 1-3 padded dims, float32/float64 and integer
inputs: outputs and input gradients; gradcheck and double backward; errors."""

import pytest
import torch
from spatial_parity import check_layer, same_error

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
MODES = ["constant", "reflect", "replicate", "circular"]
PADS_4D = [(1, 2, 0, 3), (-1, 2, 2, -1), (2, 1, 1, 0), (-2, -1, 1, 2), (0, 0, 0, 0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", PADS_4D)
def test_pad_last_two_dims(dtype, mode, pad):
    x = make_tensor((2, 3, 4, 5), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), x, noncontiguous=True)
    assert_parity(lambda lib, x: lib.nn.functional.pad(x[0], pad, mode=mode), x)  # unbatched 3-D


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", [(3, -1), (-1, 3), (4, 4), (1, 0)])
def test_pad_last_dim(mode, pad):
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), make_tensor((2, 3, 5)))
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), make_tensor((3, 5)))


@pytest.mark.parametrize("mode", MODES)
def test_pad_three_dims(mode):
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (1, 2, 2, 1, 1, 1), mode=mode), make_tensor((2, 3, 3, 4, 5)))


def test_constant_value_and_any_number_of_dims():
    x = make_tensor((2, 3, 4))
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (1, 2, 0, 1, 1, 1), value=2.5), x)
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (1, 1), "constant", -1.0), x)
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (2, -3)), make_tensor((4,)))
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (1, 1, 2, 0), value=7), make_tensor((3, 4), "int64"))
    assert_parity(lambda lib, x: lib.nn.functional.pad(x, (1, 1), mode="reflect"), make_tensor((2, 3), "int64"))


def test_gradcheck_and_double_backward():
    x = ember.tensor(make_tensor((1, 2, 4, 3), "float64")).requires_grad_()
    for mode in MODES:
        fn = lambda x, mode=mode: ember.nn.functional.pad(x, (2, -1, 1, 2), mode=mode)  # noqa: E731
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


LAYERS = [
    ("ZeroPad2d", (2,)), ("ZeroPad2d", ((1, 0, 2, -1),)), ("ZeroPad1d", ((2, 1),)),
    ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", ((1, 2, 0, 1), -1.0)),
    ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 2, 2, 0),)),
    ("ReplicationPad1d", ((3, 1),)), ("ReplicationPad2d", (2,)),
    ("CircularPad1d", (2,)), ("CircularPad2d", ((1, 0, 2, 3),)),
    ("ZeroPad3d", ((1, 0, 2, -1, 0, 1),)), ("ConstantPad3d", (1, 2.5)), ("ReflectionPad3d", ((1, 2, 2, 0, 1, 1),)),
    ("ReplicationPad3d", (2,)), ("CircularPad3d", ((1, 0, 2, 3, 1, 2),)),
]
SHAPES = {"1d": (2, 3, 4), "2d": (2, 3, 4, 5), "3d": (2, 3, 4, 5, 6)}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, args", LAYERS)
def test_layers(dtype, name, args):
    ours, theirs = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, make_tensor(SHAPES[name[-2:]], dtype), dtype)


ERRORS = [
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3, 3), (1,)),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3, 3), (1,) * 10),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3, 3), (-2, -2)),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3, 3), (1, 1), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 2, 3, 3), (1,) * 8, mode="replicate"),
    lambda lib: lib.nn.functional.pad(lib.zeros(3), (1, 1), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 1, 5), (5, 5), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 1, 5), (6, 0), mode="circular"),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 1, 5), (1, 1), mode="foo"),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 1, 5), (1, 1), mode="reflect", value=2.0),
    lambda lib: lib.nn.functional.pad(lib.zeros(2, 0, 3), (1, 1), mode="replicate"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    same_error(ERRORS[index])
