"""``searchsorted`` and ``bucketize`` against torch (ember/native/bucketization.py): both
sides, ``sorter``, per-row boundaries, scalars, int32 results, mixed dtypes, empty
inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

BOUNDARIES = np.array([-2.0, -1.0, 0.0, 0.0, 1.5, 3.0])


@pytest.mark.parametrize("side", [dict(), dict(right=True), dict(side="left"), dict(side="right")])
@pytest.mark.parametrize("out_int32", [False, True])
def test_searchsorted_matches_torch(side, out_int32):
    values = np.round(make_tensor((3, 4), "float64"), 0)
    assert_parity(lambda lib, b, v: lib.searchsorted(b, v, out_int32=out_int32, **side), BOUNDARIES, values)
    rows = np.sort(make_tensor((3, 5), "float64", seed=2), axis=-1)
    assert_parity(lambda lib, b, v: lib.searchsorted(b, v, **side), rows, values, noncontiguous=True)
    assert_parity(lambda lib, b: lib.searchsorted(b, 0.0, **side), BOUNDARIES)


def test_searchsorted_with_a_sorter_and_mixed_dtypes_matches_torch():
    unsorted = make_tensor((2, 6), "float32")
    sorter = np.argsort(unsorted, axis=-1, kind="stable")
    values = make_tensor((2, 3), "float32", seed=1)
    assert_parity(lambda lib, b, v, s: lib.searchsorted(b, v, sorter=s), unsorted, values, sorter)
    assert_parity(lambda lib, b, v: lib.searchsorted(b, v), np.array([1, 3, 5]), np.array([2.5, 3.0]))
    assert_parity(lambda lib, b, v: lib.searchsorted(b, v), np.zeros(0), np.zeros(0))


def test_bucketize_matches_torch():
    values = make_tensor((2, 3, 4), "float64")
    for right in (False, True):
        assert_parity(lambda lib, v, b: lib.bucketize(v, b, right=right), values, BOUNDARIES)
        assert_parity(lambda lib, v, b: v.bucketize(b, out_int32=True, right=right), values, BOUNDARIES)
    assert_parity(lambda lib, b: lib.bucketize(1.0, b), BOUNDARIES)


def test_errors_match_torch():
    b, v = [1.0, 2.0, 3.0], [[1.0, 2.0], [3.0, 4.0]]
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(b), lib.tensor(v), side="middle"))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(b), lib.tensor(v), side="left", right=True))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor([b, b]), lib.tensor([1.0])))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(1.0), lib.tensor(v)))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(b), lib.tensor(v), sorter=lib.tensor([0, 1])))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(b), lib.tensor(v), sorter=lib.tensor([0, 1, 5])))
    assert_same_error(lambda lib: lib.searchsorted(lib.tensor(b), lib.tensor(v), sorter=lib.tensor([0.0, 1, 2])))
    assert_same_error(lambda lib: lib.bucketize(lib.tensor(v), lib.tensor([b, b])))
