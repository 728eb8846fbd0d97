"""``meshgrid`` against torch (ember/native/shape/meshgrid.py): both indexings, list and
variadic forms, 0-d inputs, views, gradients, the warning and the errors."""

import warnings

import numpy as np
import pytest
import torch
from autograd_parity import assert_same_error

import ember
from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_grids_match_torch(indexing, dtype):
    a, b, c = make_tensor((3,), dtype), make_tensor((2,), dtype, seed=1), make_tensor((4,), dtype, seed=2)
    assert_parity(lambda lib, x, y, z: lib.meshgrid(x, y, z, indexing=indexing), a, b, c)
    assert_parity(lambda lib, x, y: lib.meshgrid([x, y], indexing=indexing), a, np.asarray(b[0]))
    assert_parity(lambda lib, x: lib.meshgrid(x, indexing=indexing), a, noncontiguous=True)


def test_grids_are_views_and_the_default_warns_as_in_torch():
    x = ember.arange(3.0)
    with pytest.warns(UserWarning, match="indexing argument"):
        grid, _ = ember.meshgrid(x, ember.arange(2.0))
    assert grid._is_view() and grid.stride() == (1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.meshgrid(x, indexing="ij")


def test_errors_match_torch():
    for lib in (ember, torch):  # torch's message then prints the tensor in C++'s format
        with pytest.raises(RuntimeError, match="meshgrid: Expected 0D or 1D tensor in the tensor list but got"):
            lib.meshgrid(lib.ones(2, 2), indexing="ij")
    assert_same_error(lambda lib: lib.meshgrid(lib.ones(2), lib.ones(2, dtype=lib.int64), indexing="ij"))
    assert_same_error(lambda lib: lib.meshgrid(lib.ones(2), indexing="yx"))
    assert_same_error(lambda lib: lib.meshgrid(indexing="ij"))
