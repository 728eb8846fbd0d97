"""``empty_strided``, ``empty_permuted`` and ``Tensor.new_empty_strided`` against torch
(ember/native/factory.py): the shape, dtype and strides (overlapping, with gaps,
zero, permuted), empty and 0-d sizes, errors. The values are unspecified."""

import pytest
import torch
from autograd_parity import assert_same_error

import ember


def _same_geometry(program):
    ours, theirs = program(ember), program(torch)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.requires_grad == theirs.requires_grad
    return ours


@pytest.mark.parametrize("size,stride", [((), ()), ((5,), (4,)), ((5, 5), (2, 1)), ((5, 5, 5), (2, 0, 1)),
                                         ((2, 3), (1, 2)), ((0, 3), (3, 1)), ((3, 4), (4, 1))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_empty_strided_has_torchs_geometry(size, stride, dtype):
    out = _same_geometry(lambda lib: lib.empty_strided(size, stride, dtype=getattr(lib, dtype)))
    out.fill_(1)  # every reachable element is in the storage
    _same_geometry(lambda lib: lib.ones(2, dtype=getattr(lib, dtype)).new_empty_strided(size, stride))


@pytest.mark.parametrize("size,layout", [((), ()), ((0,), (0,)), ((1, 3, 5), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                         ((2, 3, 4), (2, 0, 1))])
def test_empty_permuted_has_torchs_geometry(size, layout):
    _same_geometry(lambda lib: lib.empty_permuted(size, layout))
    _same_geometry(lambda lib: lib.empty_permuted(size, layout, dtype=lib.float64, requires_grad=True))


def test_new_empty_strided_takes_the_options_of_its_tensor_unless_given():
    _same_geometry(lambda lib: lib.ones(2, dtype=lib.int32).new_empty_strided((2, 2), (1, 2), dtype=lib.float64))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.empty_strided((2, 3), (1,)))
    assert_same_error(lambda lib: lib.empty_permuted((2, 3), (0, 0)))
    assert_same_error(lambda lib: lib.empty_permuted((2, 3), (0,)))
