"""The masked reductions (ember/masked/reductions.py) against ``torch.masked``: values
and gradients for float32 and float64, masks that broadcast, fully masked-out rows
(each reduction's identity or NaN), several and negative dims, keepdim, integer
inputs, non-contiguous, empty and 0-d inputs, errors."""

import numpy as np
import pytest
from autograd_parity import assert_same_error

from ember.testing import assert_parity, make_tensor

REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var", "std"]


def _mask(shape, seed=0):
    """A random mask whose first row is fully masked out and second fully kept."""
    mask = np.random.default_rng(seed).random(shape) < 0.5
    mask[0] = False
    mask[1] = True
    return mask


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_matches_torch(name, dtype):
    x, mask = make_tensor((4, 5), dtype, seed=2), _mask((4, 5))
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, (0, -1), keepdim=True, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, mask=m), x, mask, noncontiguous=True)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, mask=m), x, mask[:1])  # broadcast mask
    assert_parity(lambda lib, t: getattr(lib.masked, name)(t, 1), x)  # no mask: every element


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "logsumexp", "var"])
def test_integer_reduction_matches_torch(name):
    x, mask = make_tensor((4, 5), "int64", low=-4, high=4), _mask((4, 5))
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 1, mask=m), x.astype("int8"), mask)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_arg_reduction_matches_torch(name, dtype):
    x, mask = make_tensor((4, 5), dtype, seed=3), _mask((4, 5))
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, keepdim=True, mask=m), x, mask)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ord", [2.0, 1.0, 3.5, float("inf"), float("-inf"), 0.0])
def test_norm_matches_torch(ord, dtype):
    x, mask = make_tensor((4, 5), dtype, exclude_zero=True), _mask((4, 5))
    assert_parity(lambda lib, t, m: lib.masked.norm(t, ord, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: lib.masked.norm(t, ord, mask=m, dtype=lib.float64), x, mask)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_median_matches_torch(dtype):
    x, mask = make_tensor((4, 6), dtype, seed=4), _mask((4, 6))
    assert_parity(lambda lib, t, m: lib.masked.median(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: lib.masked.median(t, 0, keepdim=True, mask=m), x, mask, noncontiguous=True)
    kept = np.ones((4, 6), dtype=bool)
    assert_parity(lambda lib, t, m: lib.masked.median(t, mask=m), x.astype("int64"), kept)


@pytest.mark.parametrize("options", [{"unbiased": False}, {"correction": 0}, {"correction": 2}, {"correction": 9}])
def test_var_std_corrections_match_torch(options):
    x, mask = make_tensor((4, 5), "float64"), _mask((4, 5))
    assert_parity(lambda lib, t, m: lib.masked.var(t, 1, mask=m, **options), x, mask)
    assert_parity(lambda lib, t, m: lib.masked.std(t, 0, keepdim=True, mask=m, **options), x, mask)


@pytest.mark.parametrize("name", REDUCTIONS + ["norm", "median"])
def test_empty_and_zero_dim_match_torch(name):
    def call(lib, t, m, dim):
        args = (2.0, dim) if name == "norm" else (dim,)
        return getattr(lib.masked, name)(t, *args, mask=m)

    assert_parity(lambda lib, t, m: call(lib, t, m, 0), np.array(1.5), np.array(True))
    assert_parity(lambda lib, t, m: call(lib, t, m, 0), np.array(1.5), np.array(False))
    if name not in ("amax", "amin", "median"):  # torch refuses an empty reduction for these
        assert_parity(lambda lib, t, m: call(lib, t, m, 1), np.zeros((3, 0)), np.zeros((3, 0), dtype=bool))


def test_errors_match_torch():
    x = make_tensor((2, 3), "float32")
    assert_same_error(lambda lib: lib.masked.sum(lib.tensor(x), (1, 1), mask=lib.tensor(x > 0)))
    assert_same_error(lambda lib: lib.masked.sum(lib.tensor(x), 2, mask=lib.tensor(x > 0)))
    assert_same_error(lambda lib: lib.masked.amax(lib.tensor(x), 0, mask=lib.tensor(x > 0)[None]))
    assert_same_error(lambda lib: lib.masked.mean(lib.tensor([1, 2]), mask=lib.tensor([True, True])))
    assert_same_error(lambda lib: lib.masked.median(lib.tensor([[1, 2]]), 1, mask=lib.tensor([[False, False]])))
    assert_same_error(lambda lib: lib.masked.sum(lib.tensor(x), 0, mask=lib.ones(3, 3, dtype=lib.bool)))
