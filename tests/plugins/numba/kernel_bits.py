"""What the tests of ember-numba's optimizer kernels share: inputs with the awkward
values in front, and a comparison of every bit.

Helpers for tests/plugins/numba/test_fused_sgd.py and test_fused_adam.py.
"""

import numpy as np


def values(rng, size, dtype):
    """Normal values with the awkward ones in front: zeros of both signs, infinities, NaN."""
    v = rng.standard_normal(size).astype(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)[:size]
    v[:special.size] = rng.permutation(special)
    return v


def assert_same_bits(got, expected):
    """Every bit of each array, signs of zero included; a NaN matches any NaN (its sign
    and payload depend on the instruction that made it, and no comparison sees them)."""
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None
            continue
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        numbers = ~np.isnan(e)
        np.testing.assert_array_equal(g[numbers].view(f"u{g.itemsize}"), e[numbers].view(f"u{e.itemsize}"))


def no_fallback(*args, **kwargs):
    raise AssertionError("the compiled kernel fell back to the NumPy kernel")
