"""hash_tensor (ember/native/reduction/hash_tensor.py) against torch: every dtype torch
hashes (floats widened to float64, integers sign-extended to 64 bits), all dims, one dim,
a list, keepdim, 0-d and non-contiguous inputs, NaN and -0.0, and the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (-1, True), ([0, 2], False), ([0, 2], True),
                                          ([], False)])
def test_hash_tensor(dtype, dim, keepdim):
    x = make_tensor((3, 4, 5), dtype, low=-100, high=100)
    if dim is None:
        assert_parity(lambda lib, x: lib.hash_tensor(x), x)
    else:
        assert_parity(lambda lib, x: lib.hash_tensor(x, dim, keepdim=keepdim), x)
    assert_parity(lambda lib, x: lib.hash_tensor(x, 1), x, noncontiguous=True)


def test_hash_tensor_bits():
    # NaN, infinities and the two zeros hash by their bit patterns
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 1e-45], dtype="float32")
    assert_parity(lambda lib, x: lib.hash_tensor(x, 0), x[:, None] * np.ones(2, "float32"))
    assert_parity(lambda lib, x: lib.hash_tensor(x), np.array(-3.5))  # 0-d
    assert_parity(lambda lib, x: lib.hash_tensor(x, 0, keepdim=True), np.array(-3.5))


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.hash_tensor(lib.tensor([1]), mode=1), "Unknown hash_tensor mode: 1"),
    (lambda lib: lib.hash_tensor(lib.zeros(0, 3), 0), "Expected reduction dim 0 to have non-zero size"),
    (lambda lib: lib.hash_tensor(lib.zeros(0, 3)), "Expected reduction dim to be specified"),
])
def test_hash_tensor_errors(call, error):
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, IndexError), match=error) as caught:
            call(lib)
        if lib is ember:
            ember_type = caught.type
    assert ember_type is caught.type


def test_hash_tensor_of_empty_rows():
    assert_parity(lambda lib, x: lib.hash_tensor(x, 1), make_tensor((0, 3), "float32"))


def test_hash_tensor_method():
    assert_parity(lambda lib, x: x.hash_tensor(0, keepdim=True), make_tensor((3, 2), "float32"))
