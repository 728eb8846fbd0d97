"""_unsafe_masked_index and _unsafe_masked_index_put_accumulate
(ember/native/indexing/masked_index.py) against torch: values and gradients, out-of-range
indices where the mask is false, negative indices, broadcast index shapes, float32/float64,
int64 and bool, non-contiguous inputs."""

import numpy as np
import pytest

from ember.testing import assert_parity, make_tensor


def _indices(self_shape, sizes, high, low=0, seed=0):
    """One int64 index per dim, each along its own axis (so they broadcast to a grid)."""
    rng = np.random.default_rng(seed)
    out = []
    for d, n in enumerate(sizes):
        view = [1] * len(self_shape)
        view[d] = n
        out.append(rng.integers(low, high, n).reshape(view))
    return out


CASES = [  # (self shape, index sizes, high, low)
    ((5, 5), (10, 10), 5, 0),
    ((5, 5), (5, 5), 10, 0),  # out of range: masked off
    ((5, 5, 5), (10, 10, 10), 5, 0),
    ((4, 6), (3, 7), 9, -6),  # negative indices count from the end
]


def _masks(indices, shape):
    inside = [(i >= 0) & (i < size) for i, size in zip(indices, shape)]
    strict = [(i >= 1) & (i < size - 1) for i, size in zip(indices, shape)]
    return np.logical_and.reduce(np.broadcast_arrays(*inside)), np.logical_and.reduce(np.broadcast_arrays(*strict))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("shape, sizes, high, low", CASES)
def test_unsafe_masked_index(shape, sizes, high, low, dtype):
    indices = _indices(shape, sizes, high, low)
    x = make_tensor(shape, dtype)
    fill = True if dtype == "bool" else -2.5 if dtype.startswith("float") else 7
    for mask in _masks(indices, shape):
        def fn(lib, x, mask, *indices):
            return lib._unsafe_masked_index(x, mask, list(indices), fill)

        assert_parity(fn, x, mask, *indices)
        assert_parity(fn, x, mask, *indices, noncontiguous=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("shape, sizes, high, low", [((5, 5), (10, 10), 5, 0), ((5, 5), (5, 6), 10, 0),
                                                     ((5, 5, 5), (10, 9, 11), 5, 0), ((4, 6), (3, 7), 9, -6)])
def test_unsafe_masked_index_put_accumulate(shape, sizes, high, low, dtype):
    indices = _indices(shape, sizes, high, low, seed=1)
    x = make_tensor(shape, dtype)
    values = make_tensor(sizes, dtype, seed=2)
    for mask in _masks(indices, shape):
        def fn(lib, x, mask, values, *indices):
            return lib._unsafe_masked_index_put_accumulate(x, mask, list(indices), values)

        assert_parity(fn, x, mask, values, *indices)
        assert_parity(fn, x, mask, values, *indices, noncontiguous=True)
