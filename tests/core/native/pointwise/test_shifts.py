"""``<<`` / ``>>`` (``bitwise_left_shift`` / ``bitwise_right_shift``) against torch
(ember/native/pointwise/shifts.py): every integer dtype, shift amounts past the width and
negative, scalars on either side, broadcasting, in-place forms, errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity

DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def values(dtype):
    info = np.iinfo(dtype)
    return np.array([0, 1, 5, info.max, info.min, info.max // 3, info.min // 2, 7], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_shifts_by_tensors_match_torch(dtype):
    amounts = np.array([0, 1, 3, 7, 8, 31, 63, 64], dtype=dtype)
    if np.dtype(dtype).kind == "i":
        amounts[-1] = -1
    for fn in ("bitwise_left_shift", "bitwise_right_shift"):
        assert_parity(lambda lib, a, b: getattr(lib, fn)(a, b), values(dtype), amounts)
    assert_parity(lambda lib, a, b: (a << b, a >> b), values(dtype), amounts)
    assert_parity(lambda lib, a, b: (a << b, a >> b), values(dtype).reshape(2, 4), amounts[:4])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("amount", [0, 2, 9, 40, 70, -1])
def test_shifts_by_numbers_match_torch(dtype, amount):
    assert_parity(lambda lib, a: (a << amount, a >> amount), values(dtype))
    assert_parity(lambda lib, a: (3 << a.clamp(0, 5), 100 >> a.clamp(0, 5)), values(dtype))


def test_promotion_bool_and_in_place_match_torch():
    assert_parity(lambda lib, a, b: a << b, np.array([1, 2], dtype="int8"), np.array([1, 2], dtype="int64"))
    assert_parity(lambda lib, a: (a << 1, a >> 1), np.array([True, False]))

    def in_place(lib, a):
        a = a.clone()
        a <<= 2
        a >>= 1
        return a.bitwise_left_shift_(1)
    assert_parity(in_place, values("int32"))


@pytest.mark.parametrize("call", [lambda lib: lib.ones(2) << 1, lambda lib: lib.ones(2, dtype=lib.int64) >> 1.5,
                                  lambda lib: lib.tensor([1.5]) >> lib.tensor([1])])
def test_floats_are_refused_like_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(ember)
    assert str(ours.value) == str(theirs.value)
