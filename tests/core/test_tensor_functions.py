"""Functions that torch exports beside their tensor methods, against torch (issue 26):
``fill``, ``zero_``, ``resize_as_``, ``positive`` and ``Tensor.__rdiv__``
(ember/tensor_methods.py, native/pointwise/unary.py): values, gradients, dtypes,
non-contiguous, empty and 0-d tensors, errors."""

import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(3, 4), (), (0, 2)])
def test_fill_matches_torch(dtype, shape):
    grad = dtype != "int64"
    assert_parity(lambda lib, t: lib.fill(t, 2.5) * t, make_tensor(shape, dtype), grad=grad, noncontiguous=True)
    assert_parity(lambda lib, t, v: lib.fill(t, v) * 3, make_tensor(shape, dtype), make_tensor((), dtype, seed=3),
                  grad=grad)


def test_fill_leaves_its_input_alone():
    x = ember.ones(2)
    assert ember.fill(x, 5).tolist() == [5.0, 5.0] and x.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_and_resize_as_functions_match_torch(dtype):
    assert_parity(lambda lib, t: lib.zero_(t.clone()), make_tensor((3, 4), dtype), noncontiguous=True)
    assert_parity(lambda lib, t, o: lib.resize_as_(t.detach().clone(), o).shape, make_tensor((6,), dtype),
                  make_tensor((2, 3), dtype), grad=False)
    x = ember.ones(3)
    assert ember.zero_(x) is x and x.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_positive_matches_torch(dtype):
    assert_parity(lambda lib, t: lib.positive(t), make_tensor((3, 4), dtype), grad=dtype != "int64",
                  noncontiguous=True)
    assert_parity(lambda lib, t: lib.positive(t), make_tensor((), dtype), grad=dtype != "int64")


def test_positive_of_bool_raises_like_torch():
    assert_same_error(lambda lib: lib.positive(lib.ones(2, dtype=lib.bool)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_rdiv_matches_torch(dtype):
    assert_parity(lambda lib, t: t.__rdiv__(2), make_tensor((3, 4), dtype, exclude_zero=True),
                  grad=dtype != "int64", noncontiguous=True)
    assert_parity(lambda lib, t: t.__rdiv__(1.5), make_tensor((), dtype, exclude_zero=True), grad=dtype != "int64")
    assert ember.Tensor.__rdiv__ is ember.Tensor.__rtruediv__
    assert torch.Tensor.__rdiv__ is torch.Tensor.__rtruediv__
