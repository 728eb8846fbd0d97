"""The compiled index_reduce of ember-numba against the core's NumPy kernel, bit for bit,
and against torch: float32 and float64, every dim, every reduction with and without the
input's own values, repeated targets, NaN and zeros of both signs, and the inputs that go
back to the NumPy kernel.

Tests for plugins/numba/src/ember_numba/index_reduce.py (PyTorch counterpart:
aten/src/ATen/native/TensorAdvancedIndexing.cpp, v2.13).
"""

import warnings

import numpy as np
import pytest
import torch

from ember.native.indexing import scatter_reduce as core
from ember_numba import index_reduce as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

REDUCTIONS = ["prod", "mean", "amax", "amin"]


def arrays(dtype, dim, seed):
    """An input (4, 5, 6) and a source of 7 slices along ``dim`` in halves (ties), NaN and
    zeros of both signs in front; an index that repeats targets."""
    rng = np.random.default_rng(seed)
    a = (np.round(rng.standard_normal((4, 5, 6)) * 2) / 2).astype(dtype)
    shape = list(a.shape)
    shape[dim] = 7
    source = (np.round(rng.standard_normal(shape) * 2) / 2).astype(dtype)
    source.reshape(-1)[:3] = [np.nan, 0.0, -0.0]
    return a, rng.integers(0, a.shape[dim], 7), source


def test_the_cpu_kernel_is_the_compiled_one():
    assert core.INDEX_REDUCE.kernel_for("cpu") is compiled.index_reduce


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_matches_the_numpy_kernel_bit_for_bit_and_torch(monkeypatch, dtype, dim, reduce, include_self):
    a, index, source = arrays(dtype, dim, seed=dim * 8 + REDUCTIONS.index(reduce) * 2 + include_self)
    expected = core.INDEX_REDUCE.generic(np, a, index, source, dim, reduce, include_self)
    monkeypatch.setattr(core.INDEX_REDUCE, "generic", no_fallback)
    out = compiled.index_reduce(np, a, index, source, dim, reduce, include_self)
    assert_same_bits([out], [expected])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: index_reduce is in beta
        theirs = torch.from_numpy(a).index_reduce(dim, torch.from_numpy(index), torch.from_numpy(source), reduce,
                                                  include_self=include_self)
    np.testing.assert_allclose(out, theirs.numpy(), rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("change", ["strided", "int32 index", "float16", "index out of range"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, change):
    a, index, source = arrays(np.float32, 0, seed=1)
    if change == "strided":
        source = np.repeat(source, 2, axis=2)[:, :, ::2]
    elif change == "int32 index":
        index = index.astype(np.int32)
    elif change == "float16":
        a, source = a.astype(np.float16), source.astype(np.float16)
    else:
        index[-1] = 4  # met last; the NumPy kernel raises IndexError
    calls = numpy_kernel_calls(monkeypatch, core.INDEX_REDUCE)
    if change == "index out of range":
        before = a.copy()
        with pytest.raises(IndexError):
            compiled.index_reduce(np, a, index, source, 0, "amax", False)
        np.testing.assert_array_equal(a, before)
        assert calls == [core.INDEX_REDUCE.qualname]
        return
    out = compiled.index_reduce(np, a, index, source, 0, "amax", True)
    assert calls == [core.INDEX_REDUCE.qualname]
    np.testing.assert_array_equal(out, core.INDEX_REDUCE.generic(np, a, index, source, 0, "amax", True))
