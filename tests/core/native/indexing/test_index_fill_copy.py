"""``index_fill`` and ``index_copy`` (and their in-place forms) against torch
(ember/native/indexing/index_fill_copy.py): every dim, repeated and negative indices,
number and 0-d tensor values, values and gradients, dtypes, 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_index_fill_matches_torch(dtype):
    x = make_tensor((3, 4, 2), dtype)
    for dim, index in ((0, np.array([2, 0, 2])), (1, np.array([-1, 1])), (-1, np.array(1))):
        assert_parity(lambda lib, t, i: t.index_fill(dim, i, 1), x, index)
        assert_parity(lambda lib, t, i: (t * 1 if t.is_floating_point() else t.clone()).index_fill_(dim, i, 0), x,
                      index)
    value = np.asarray(make_tensor((), dtype, seed=3))
    assert_parity(lambda lib, t, i, v: lib.index_fill(t, 1, i, v), x, np.array([3, 3, 0]), value)
    assert_parity(lambda lib, t, i: t.index_fill(0, i, 2), np.asarray(make_tensor((), dtype)), np.array([0]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_index_copy_matches_torch(dtype):
    x = make_tensor((4, 3), dtype)
    assert_parity(lambda lib, t, i, s: t.index_copy(0, i, s), x, np.array([3, 0]), make_tensor((2, 3), dtype, seed=1))
    assert_parity(lambda lib, t, i, s: lib.index_copy(t, 1, i, s), x, np.array([2, 0]),
                  make_tensor((4, 2), dtype, seed=2), noncontiguous=True)
    assert_parity(lambda lib, t, i, s: (t * 1 if t.is_floating_point() else t.clone()).index_copy_(-1, i, s), x,
                  np.array([1, 0, 2]), make_tensor((4, 3), dtype, seed=3))
    assert_parity(lambda lib, t, i, s: t.index_copy(0, i, s), np.asarray(make_tensor((), dtype)), np.array([0]),
                  np.asarray(make_tensor((), dtype, seed=4)))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.zeros(3, 2).index_fill(0, lib.tensor([3]), 2.0))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_fill(0, lib.tensor([[0]]), 2.0))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_fill(0, lib.tensor([0.0]), 2.0))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_fill(0, lib.tensor([0]), lib.tensor([2.0])))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([-1]), lib.ones(1, 2)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([3]), lib.ones(1, 2)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([0]), lib.ones(1, 2, dtype=lib.float64)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([0, 1]), lib.ones(1, 2)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([0]), lib.ones(1, 3)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([0.0]), lib.ones(1, 2)))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_copy(0, lib.tensor([[0]]), lib.ones(1, 2)))
