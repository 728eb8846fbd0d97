"""``block_diag`` (ember/native/shape/block_diag.py), ``rot90`` (shape.py), ``trace``
(diagonal.py) and ``tril_indices``/``triu_indices`` (triangular.py) against torch:
values, gradients, dtypes (promotion for block_diag), empty and 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_block_diag_matches_torch(dtype):
    blocks = [make_tensor((2, 3), dtype), make_tensor((4,), dtype, seed=1), np.asarray(make_tensor((), dtype)),
              make_tensor((0, 2), dtype), make_tensor((2, 2), dtype, seed=2)]
    assert_parity(lambda lib, *ts: lib.block_diag(*ts), *blocks)
    assert_parity(lambda lib: lib.block_diag())


def test_block_diag_promotes_and_checks_like_torch():
    assert_parity(lambda lib, a, b, c: lib.block_diag(a, b, c), make_tensor((2, 2), "float32"),
                  make_tensor((3,), "int64"), np.asarray(True))
    assert_same_error(lambda lib: lib.block_diag(lib.ones(2, 2), lib.ones(2, 2, 2)))


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (0, 2)])
def test_rot90_matches_torch(k, dims):
    x = make_tensor((2, 3, 4), "float64")
    assert_parity(lambda lib, t: lib.rot90(t, k, dims), x)
    assert_parity(lambda lib, t: t.rot90(k, dims), x.astype("int64"), noncontiguous=True)


def test_rot90_errors_match_torch():
    assert_same_error(lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 0]))
    assert_same_error(lambda lib: lib.rot90(lib.ones(2), 1, [0, 1]))
    assert_same_error(lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 1, 2]))
    assert_same_error(lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 3]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_trace_matches_torch(dtype):
    assert_parity(lambda lib, t: lib.trace(t), make_tensor((3, 5), dtype))
    assert_parity(lambda lib, t: t.trace(), make_tensor((4, 2), dtype), noncontiguous=True)
    assert_parity(lambda lib, t: t.trace(), make_tensor((0, 2), dtype))
    assert_same_error(lambda lib: lib.trace(lib.ones(3)))
    assert_same_error(lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)))


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (3, 4, 1), (4, 3, -2), (0, 4, 0), (3, 5, 7), (5, 3, -9)])
def test_triangle_indices_match_torch(fn, row, col, offset):
    assert_parity(lambda lib: getattr(lib, fn)(row, col, offset))
    assert_parity(lambda lib: getattr(lib, fn)(row, col, offset, dtype=lib.int32))


def test_triangle_index_errors_match_torch():
    assert_same_error(lambda lib: lib.tril_indices(-1, 3))
    assert_same_error(lambda lib: lib.triu_indices(3, -1))
    assert_same_error(lambda lib: lib.tril_indices(3, 3, dtype=lib.float32))
