"""F.unfold / F.fold (im2col / col2im) and the Unfold / Fold layers against torch:
kernel sizes, dilation, padding, stride, batched and unbatched inputs, float32/float64:
outputs and input gradients; gradcheck and double backward; fold(unfold(x)) counts
overlaps; errors."""

import pytest
import torch
from spatial_parity import TOLERANCE, check_layer, same_error

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close, assert_parity, make_tensor

FLOATS = ["float32", "float64"]
CASES = [
    dict(kernel_size=2),
    dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
    dict(kernel_size=3, padding=(0, 2), stride=3),
    dict(kernel_size=(1, 4), dilation=2),
    dict(kernel_size=2, padding=3, stride=2),  # some taps read only padding
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", CASES)
def test_unfold(dtype, kwargs):
    x = make_tensor((2, 3, 7, 9), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.unfold(x, **kwargs), x, noncontiguous=True)
    assert_parity(lambda lib, x: lib.nn.functional.unfold(x[0], **kwargs), x)  # unbatched


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", CASES)
def test_fold(dtype, kwargs):
    blocks = torch.nn.functional.unfold(torch.zeros(1, 3, 7, 9), **kwargs).shape[1:]
    cols = make_tensor((2,) + tuple(blocks), dtype)
    assert_parity(lambda lib, c: lib.nn.functional.fold(c, (7, 9), **kwargs), cols, **TOLERANCE[dtype])
    assert_parity(lambda lib, c: lib.nn.functional.fold(c[1], (7, 9), **kwargs), cols, **TOLERANCE[dtype])


def test_fold_of_unfold_counts_overlaps():
    F = ember.nn.functional
    x = ember.ones(1, 2, 5, 5)
    ours = F.fold(F.unfold(x, 3, padding=1), (5, 5), 3, padding=1)
    theirs = torch.nn.functional.fold(torch.nn.functional.unfold(torch.ones(1, 2, 5, 5), 3, padding=1), (5, 5), 3,
                                      padding=1)
    assert_close(ours, theirs)


def test_gradcheck_and_double_backward():
    x = ember.tensor(make_tensor((1, 2, 4, 5), "float64")).requires_grad_()
    F = ember.nn.functional
    unfold = lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))  # noqa: E731
    assert gradcheck(unfold, (x,))
    assert gradgradcheck(unfold, (x,))
    cols = ember.tensor(make_tensor((1, 8, 12), "float64")).requires_grad_()
    fold = lambda c: F.fold(c, (4, 5), 2, stride=(2, 1), padding=(1, 0))  # noqa: E731
    assert gradcheck(fold, (cols,))
    assert gradgradcheck(fold, (cols,))


@pytest.mark.parametrize("dtype", FLOATS)
def test_layers(dtype):
    ours, theirs = ember.nn.Unfold((2, 3), padding=1, stride=2), torch.nn.Unfold((2, 3), padding=1, stride=2)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, make_tensor((2, 3, 6, 7), dtype), dtype)
    ours, theirs = ember.nn.Fold((4, 5), 2, dilation=(2, 1)), torch.nn.Fold((4, 5), 2, dilation=(2, 1))
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, make_tensor((2, 12, 8), dtype), dtype)


ERRORS = [
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 4), 5),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 4, 4, 4), 2),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 4, 4), 5),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 4, 4), 2, stride=0),
    lambda lib: lib.nn.functional.fold(lib.zeros(2, 7, 9), (4, 4), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(2, 8, 10), (4, 4), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(8), (4, 4), 2),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    same_error(ERRORS[index])
