"""``unique`` and ``unique_consecutive`` against torch (ember/native/unique.py): values,
inverse, counts, with and without ``dim``, NaN, bool, empty and 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

INPUTS = {
    "ints": lambda: make_tensor((4, 6), "int64", low=0, high=4),
    "floats": lambda: np.round(make_tensor((3, 5), "float64"), 0),
    "nans": lambda: np.array([3.0, np.nan, 1.0, 3.0, np.nan, 1.0]),
    "bool": lambda: make_tensor((7,), "bool"),
    "scalar": lambda: np.asarray(2.5),
    "empty": lambda: np.zeros((0, 3)),
    "float32": lambda: np.round(make_tensor((10,), "float32"), 0),
}


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("fn", ["unique", "unique_consecutive"])
def test_flat_results_match_torch(name, fn):
    x = INPUTS[name]()
    for inverse in (False, True):
        for counts in (False, True):
            assert_parity(lambda lib, t: getattr(lib, fn)(t, return_inverse=inverse, return_counts=counts), x,
                          grad=False)
    assert_parity(lambda lib, t: getattr(t, fn)(), x, grad=False, noncontiguous=True)


@pytest.mark.parametrize("fn", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_slices_along_a_dim_match_torch(fn, dim):
    x = make_tensor((5, 4), "int64", low=0, high=1)
    x[3] = x[1]
    x[2] = x[1]  # repeated rows, some consecutive
    assert_parity(lambda lib, t: getattr(lib, fn)(t, dim=dim, return_inverse=True, return_counts=True), x,
                  grad=False)
    assert_parity(lambda lib, t: getattr(lib, fn)(t, dim=dim, return_inverse=True, return_counts=True),
                  np.repeat(x[:, :, None], 2, axis=2).astype("float32"), grad=False)


def test_unique_sorts_even_when_not_asked_and_takes_an_empty_selected_dim():
    x = np.array([5, 3, 5, 1, 3])
    assert_parity(lambda lib, t: lib.unique(t, sorted=False, return_inverse=True, return_counts=True), x,
                  grad=False)
    assert_parity(lambda lib, t: lib.unique(t, dim=0, return_inverse=True, return_counts=True), np.zeros((0, 3)),
                  grad=False)


def test_errors_match_torch():
    assert_same_error(lambda lib: lib.unique(lib.ones(0, 3), dim=1))
    assert_same_error(lambda lib: lib.unique(lib.ones(2), dim=3))
    assert_same_error(lambda lib: lib.unique_consecutive(lib.ones(2, 0), dim=0))
