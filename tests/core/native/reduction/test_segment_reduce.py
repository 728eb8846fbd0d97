"""segment_reduce (ember/native/reduction/segment_reduce.py) against torch: every
reduction with lengths and offsets, axis 0 and 1, initial, empty segments, unsafe lengths
that do not cover the dim, NaN, zeros in prod, ties in max/min, float32/float64,
non-contiguous data; values and gradients; the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

REDUCTIONS = ["sum", "mean", "max", "min", "prod"]
CASES = [  # (data shape, axis, lengths, unsafe)
    ((5,), 0, [0, 1, 2, 2], False),
    ((5,), 0, [2, 0, 3, 0], False),
    ((5, 4), 0, [0, 1, 2, 2], False),
    ((10, 3, 2), 0, [1, 2, 0, 6, 0], True),  # the lengths cover 9 of 10
    ((5, 5), 1, [[2, 0, 3, 0], [0, 1, 2, 2], [3, 0, 2, 0], [1, 1, 1, 2], [0, 1, 2, 2]], False),
    ((5, 5, 3), 1, [[0, 1, 2, 2]] * 5, False),
]


def _bounds(lengths, mode, axis):
    lengths = np.asarray(lengths, dtype=np.int64)
    if mode == "lengths":
        return lengths
    zeros = np.zeros(lengths.shape[:axis] + (1,), dtype=np.int64)
    return np.cumsum(np.concatenate([zeros, lengths], axis), axis)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["lengths", "offsets"])
@pytest.mark.parametrize("initial", [None, 2])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("shape, axis, lengths, unsafe", CASES)
def test_segment_reduce(shape, axis, lengths, unsafe, reduce, initial, mode, dtype):
    data = make_tensor(shape, dtype)
    bounds = _bounds(lengths, mode, axis)

    def fn(lib, data, bounds):
        return lib.segment_reduce(data, reduce, **{mode: bounds}, axis=axis, unsafe=unsafe, initial=initial)

    assert_parity(fn, data, bounds)
    assert_parity(fn, data, bounds, noncontiguous=True)


@pytest.mark.parametrize("initial", [None, 2.0, -1.0])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_segment_reduce_nan_zeros_and_ties(reduce, initial):
    data = np.array([1.0, 0.0, 2.0, 0.0, 3.0, 0.0, np.nan, 2.0, 2.0, 0.0, 0.0], dtype="float64")
    lengths = np.array([1, 2, 2, 2, 2, 2, 0])
    assert_parity(lambda lib, x, n: lib._segment_reduce(x, reduce, lengths=n, initial=initial), data, lengths)


@pytest.mark.parametrize("kwargs, message", [
    ({"lengths": [3, 3]}, "sum to data.size"),
    ({"lengths": [3, -1, 3]}, "negative"),
    ({"lengths": [[5]], "axis": 0}, "data.dim"),
    ({"lengths": [5], "axis": 1}, "Dimension out of range"),
    ({"lengths": [2.0, 3.0]}, "not implemented for 'Float'"),
    ({}, "Either lengths or offsets"),
])
def test_segment_reduce_errors(kwargs, message):
    for lib in (ember, torch):
        args = {k: lib.tensor(v) if k == "lengths" else v for k, v in kwargs.items()}
        with pytest.raises(IndexError if "range" in message else RuntimeError, match=message):
            lib.segment_reduce(lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), "sum", **args)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="reduce argument must be"):
            lib.segment_reduce(lib.tensor([1.0]), "median", lengths=lib.tensor([1]))
