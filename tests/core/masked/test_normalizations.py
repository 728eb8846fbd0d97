"""The masked normalizations and ``logaddexp`` (ember/masked/normalizations.py) against
``torch.masked``: values and gradients for float32 and float64, masked-out elements and
fully masked-out rows, broadcast masks, ``dtype=``, non-contiguous, empty and 0-d inputs."""

import numpy as np
import pytest

from ember.testing import assert_parity, make_tensor

OPS = ["cumsum", "cumprod", "softmax", "log_softmax", "softmin"]


def _mask(shape, seed=0):
    mask = np.random.default_rng(seed).random(shape) < 0.5
    mask[0] = False
    mask[1] = True
    return mask


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", OPS)
def test_normalization_matches_torch(name, dtype):
    x, mask = make_tensor((4, 5), dtype, seed=5), _mask((4, 5))
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, -2, mask=m), x, mask, noncontiguous=True)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, mask=m), x, mask[2])  # broadcast mask
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, dtype=lib.float64, mask=m), x, mask)
    assert_parity(lambda lib, t: getattr(lib.masked, name)(t, 1), x)
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, mask=m), np.zeros((0, 3), dtype), np.ones(3, bool))
    assert_parity(lambda lib, t, m: getattr(lib.masked, name)(t, 0, mask=m), np.asarray(np.float64(0.5).astype(dtype)),
                  np.array(True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ord", [2.0, 1.0, float("inf")])
def test_normalize_matches_torch(ord, dtype):
    x, mask = make_tensor((4, 5), dtype, exclude_zero=True), _mask((4, 5))
    assert_parity(lambda lib, t, m: lib.masked.normalize(t, ord, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: lib.masked.normalize(t, ord, 0, eps=0.5, mask=m), x, mask, noncontiguous=True)


def test_integer_cumulative_matches_torch():
    x, mask = make_tensor((4, 5), "int64", low=-3, high=3), _mask((4, 5))
    assert_parity(lambda lib, t, m: lib.masked.cumsum(t, 1, mask=m), x, mask)
    assert_parity(lambda lib, t, m: lib.masked.cumprod(t, 1, mask=m), x.astype("int16"), mask)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logaddexp_matches_torch(dtype):
    x, y = make_tensor((4, 5), dtype, seed=6), make_tensor((4, 5), dtype, seed=7)
    xm, ym = _mask((4, 5), 1), _mask((4, 5), 2)
    assert_parity(lambda lib, a, b, m, n: lib.masked.logaddexp(a, b, input_mask=m, other_mask=n), x, y, xm, ym)
    assert_parity(lambda lib, a, b, m: lib.masked.logaddexp(a, b, input_mask=m), x, y, xm[0], noncontiguous=True)
    assert_parity(lambda lib, a, b, m: lib.masked.logaddexp(a, b, other_mask=m, dtype=lib.float64), x, y, ym)
