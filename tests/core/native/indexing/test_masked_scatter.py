"""``masked_scatter`` / ``masked_scatter_`` against torch (ember/native/indexing/masked_scatter.py):
values, broadcasting masks, gradients for input and source, dtypes, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

MASK = np.array([[True, False, True], [False, True, True]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("mask", [MASK, MASK[0], np.zeros((2, 3), bool), np.ones((2, 3), bool)])
@pytest.mark.parametrize("source_shape", [(10,), (2, 5), (6,)])
def test_masked_scatter_matches_torch(dtype, mask, source_shape):
    x, source = make_tensor((2, 3), dtype), make_tensor(source_shape, dtype, seed=3)
    assert_parity(lambda lib, t, m, s: t.masked_scatter(m, s), x, mask, source)
    assert_parity(lambda lib, t, m, s: lib.masked_scatter(t, m, s), x, mask, source, noncontiguous=True)
    assert_parity(lambda lib, t, m, s: t.clone().masked_scatter_(m, s) * 1, x, mask, source)


def test_mask_broadcasting_the_input_and_empty_inputs_match_torch():
    assert_parity(lambda lib, t, m, s: t.masked_scatter(m, s), make_tensor((3,), "float64"), MASK,
                  make_tensor((8,), "float64", seed=1))
    assert_parity(lambda lib, t, m, s: t.masked_scatter(m, s), make_tensor((0, 3), "float32"),
                  np.zeros((0, 3), bool), make_tensor((0,), "float32"))


ERRORS = {
    "short_source": lambda lib: lib.zeros(2, 3).masked_scatter(lib.tensor(MASK), lib.arange(2.0)),
    "int_mask": lambda lib: lib.zeros(2, 3).masked_scatter(lib.tensor(MASK).long(), lib.arange(10.0)),
    "dtype_mismatch": lambda lib: lib.zeros(2, 3).masked_scatter(lib.tensor(MASK), lib.arange(10)),
    "in_place_broadcast": lambda lib: lib.zeros(3).masked_scatter_(lib.tensor(MASK), lib.arange(10.0)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(theirs.type) as ours:
        ERRORS[name](ember)
    # ember names its tensor types ember.BoolTensor where torch says CPUBoolType.
    assert str(ours.value).split("): ")[-1] == str(theirs.value).split("): ")[-1]
