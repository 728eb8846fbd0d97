"""``unravel_index`` and ``nonzero_static`` against torch
(ember/native/indexing/unravel_index.py, indexing.py): every shape form, indices that
wrap around, int32 indices, empty and 0-d tensors, padding and truncating, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("shape", [(4, 5), (7,), 9, (2, 1, 3), (1, 2 ** 31 - 1), ()])
def test_unravel_index_matches_torch(shape):
    indices = np.array([[0, 3, 7], [11, 19, 2]])
    assert_parity(lambda lib, i: lib.unravel_index(i, shape), indices, grad=False)
    assert_parity(lambda lib, i: lib.unravel_index(i, shape), indices.astype(np.int32), grad=False,
                  noncontiguous=True)


def test_out_of_range_empty_and_zero_dim_indices_match_torch():
    assert_parity(lambda lib, i: lib.unravel_index(i, (2, 4)), np.array([9, -1, -9]), grad=False)
    assert_parity(lambda lib, i: lib.unravel_index(i, (2, 4)), np.array(5), grad=False)
    assert_parity(lambda lib, i: lib.unravel_index(i, (2, 4)), np.zeros((0, 2), np.int64), grad=False)


def test_unravel_index_errors_match_torch():
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 4)))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([True]), (2, 4)))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (2, -4)))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (2, 4.0)))


@pytest.mark.parametrize("size", [0, 2, 5, 30])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_nonzero_static_matches_torch(size, dtype):
    x = (make_tensor((3, 5), "float64") > 1).astype(dtype)
    assert_parity(lambda lib, t: lib.nonzero_static(t, size=size), x, grad=False)
    assert_parity(lambda lib, t: t.nonzero_static(size=size, fill_value=-7), x, grad=False, noncontiguous=True)


def test_nonzero_static_of_empty_and_zero_dim_inputs_matches_torch():
    assert_parity(lambda lib, t: lib.nonzero_static(t, size=3), np.array(2.0), grad=False)
    assert_parity(lambda lib, t: lib.nonzero_static(t, size=2), np.array(0.0), grad=False)
    assert_parity(lambda lib, t: lib.nonzero_static(t, size=2), np.zeros((0, 3)), grad=False)


def test_nonzero_static_errors_match_torch():
    assert_same_error(lambda lib: lib.nonzero_static(lib.ones(3), size=-1))
