"""``scatter_reduce`` and ``index_reduce`` (and their in-place forms) against torch
(ember/native/indexing/scatter_reduce.py): every reduction, with and without the
input's own values, repeated positions, ties and zeros (for amax/amin and prod
gradients), integer means, values and gradients, 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def small_ints(shape, dtype, seed=0):
    return np.asarray(np.random.default_rng(seed).integers(-2, 3, size=shape)).astype(dtype)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_scatter_reduce_matches_torch(reduce, include_self, dtype):
    x, src = small_ints((4, 3), dtype), small_ints((5, 3), dtype, seed=1)  # zeros and ties on purpose
    index = np.array([[0, 1, 3], [0, 0, 3], [2, 1, 3], [0, 1, 1], [3, 3, 3]])
    assert_parity(lambda lib, t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=include_self), x, index, src)
    assert_parity(lambda lib, t, i, s: lib.scatter_reduce(t, 1, i, s, reduce, include_self=include_self), x,
                  index[:4, :2] % 3, src[:4, :2])
    assert_parity(lambda lib, t, i, s: (t * 1).scatter_reduce_(0, i, s, reduce, include_self=include_self), x,
                  index, src)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_index_reduce_matches_torch(reduce, include_self, dtype):
    x, source = small_ints((4, 3), dtype), small_ints((5, 3), dtype, seed=1)
    index = np.array([0, 2, 0, 3, 0])
    with pytest.warns(UserWarning, match="index_reduce"):
        assert_parity(lambda lib, t, i, s: t.index_reduce(0, i, s, reduce, include_self=include_self), x, index,
                      source)
        assert_parity(lambda lib, t, i, s: lib.index_reduce(t, 1, i, s, reduce, include_self=include_self), x,
                      np.array([2, 2, 1]), small_ints((4, 3), dtype, seed=2), noncontiguous=True)
        assert_parity(lambda lib, t, i, s: (t * 1).index_reduce_(0, i, s, reduce, include_self=include_self), x,
                      index, source)


def test_the_old_names_max_and_min_are_taken_as_in_torch():
    x, index, src = make_tensor((3,), "float64"), np.array([0, 0, 2]), make_tensor((3,), "float64", seed=1)
    for name in ("max", "min"):
        assert_parity(lambda lib, t, i, s: t.scatter_reduce(0, i, s, name), x, index, src, grad=False)


def test_bool_and_zero_dim_inputs_match_torch():
    for reduce in ("sum", "prod", "amax", "amin"):
        assert_parity(lambda lib, t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=False),
                      make_tensor((4,), "bool"), np.array([0, 1, 1]), make_tensor((3,), "bool", seed=1))
    assert_parity(lambda lib, t, i, s: t.scatter_reduce(0, i, s, "mean"), np.asarray(2.0), np.array(0),
                  np.asarray(4.0))


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.zeros(3, 2).scatter_reduce(0, lib.tensor([[0, 0]]), lib.ones(1, 2), "add"))
    assert_same_error(lambda lib: lib.zeros(3, 2).scatter_reduce(0, lib.tensor([[-1, 0]]), lib.ones(1, 2), "sum"))
    assert_same_error(lambda lib: lib.zeros(3, 2).scatter_reduce(0, lib.tensor([[0, 0]]),
                                                                  lib.ones(1, 2, dtype=lib.float64), "sum"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0]), lib.ones(1, 2), "sum"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([-1]), lib.ones(1, 2), "prod"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0, 1]), lib.ones(1, 2), "prod"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([[0]]), lib.ones(1, 2), "prod"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0.0]), lib.ones(1, 2), "prod"))
    assert_same_error(lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0]), lib.ones(1, 2, dtype=lib.float64),
                                                                "prod"))
