"""The compiled gather and scatter_add of ember-numba against the core's NumPy kernels
(a read through the full index, ``np.add.at``), bit for bit, and against torch: float32
and float64, every dim, an index shorter than the input along ``dim`` with repeats, and
the inputs that go back to the NumPy kernels.

Tests for plugins/numba/src/ember_numba/scatter_gather.py (PyTorch counterpart:
aten/src/ATen/native/cpu/ScatterGatherKernel.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

from ember.native.indexing import indexing as core
from ember_numba import scatter_gather as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls


def arrays(dtype, dim, length, seed=0):
    """An input (4, 5, 6), an index and src of ``length`` along ``dim`` (repeats collide)."""
    rng = np.random.default_rng(seed)
    a = values(rng, 120, dtype).reshape(4, 5, 6)
    shape = list(a.shape)
    shape[dim] = length
    index = rng.integers(0, a.shape[dim], shape)
    return a, index, values(rng, index.size, dtype).reshape(shape)


def test_the_cpu_kernels_are_the_compiled_ones():
    assert core.SCATTER_ADD.kernel_for("cpu") is compiled.scatter_add
    assert core.GATHER.kernel_for("cpu") is compiled.gather


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("length", [1, 3, 9])
def test_gather_matches_the_numpy_kernel_bit_for_bit_and_torch(monkeypatch, dtype, dim, length):
    a, index, _ = arrays(dtype, dim, length, seed=dim + length)
    expected = core.GATHER.generic(np, a, index, dim)
    monkeypatch.setattr(core.GATHER, "generic", no_fallback)
    out = compiled.gather(np, a, index, dim)
    assert_same_bits([out], [expected])
    assert_same_bits([out], [torch.from_numpy(a).gather(dim, torch.from_numpy(index)).numpy()])


def test_gather_other_inputs_take_the_numpy_kernel(monkeypatch):
    a, index, _ = arrays(np.float32, 1, 3)
    cases = [(a[:, :, ::2], index[:, :, :3].copy()), (a, index.astype(np.int32)), (a, index[:, :, :4].copy()),
             (a.astype(np.float16), index)]  # strided, int32 index, shorter in another dim, float16
    expected = [core.GATHER.generic(np, a_, index_, 1) for a_, index_ in cases]
    calls = numpy_kernel_calls(monkeypatch, core.GATHER)
    for (a_, index_), want in zip(cases, expected):
        np.testing.assert_array_equal(compiled.gather(np, a_, index_, 1), want)
    assert calls == [core.GATHER.qualname] * 4


def test_gather_of_an_index_out_of_range_gives_the_numpy_kernels_result_or_error():
    a, index, _ = arrays(np.float32, 1, 3)
    index[-1, -1, -1] = -1  # NumPy's kernel reads it from the end (ember.gather refuses it before the op)
    np.testing.assert_array_equal(compiled.gather(np, a, index, 1), core.GATHER.generic(np, a, index, 1))
    index[-1, -1, -1] = 5
    with pytest.raises(IndexError):
        compiled.gather(np, a, index, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("length", [1, 3, 9])
def test_matches_the_numpy_kernel_bit_for_bit_and_torch(monkeypatch, dtype, dim, length):
    a, index, src = arrays(dtype, dim, length, seed=dim + length)
    with np.errstate(invalid="ignore"):  # inf + -inf, in both kernels
        expected = core.SCATTER_ADD.generic(np, a, index, src, dim)
    monkeypatch.setattr(core.SCATTER_ADD, "generic", no_fallback)
    out = compiled.scatter_add(np, a, index, src, dim)
    assert_same_bits([out], [expected])
    theirs = torch.from_numpy(a).scatter_add(dim, torch.from_numpy(index), torch.from_numpy(src)).numpy()
    np.testing.assert_allclose(out, theirs, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-6)


@pytest.mark.parametrize("change", ["strided src", "int32 index", "shorter in another dim", "float16",
                                    "index out of range"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, change):
    a, index, src = arrays(np.float32, 1, 3)
    if change == "strided src":
        src = np.repeat(src, 2, axis=2)[:, :, ::2]
    elif change == "int32 index":
        index = index.astype(np.int32)
    elif change == "shorter in another dim":
        index, src = index[:, :, :4].copy(), src[:, :, :4].copy()
    elif change == "float16":
        a, src = a.astype(np.float16), src.astype(np.float16)
    else:
        index[-1, -1, -1] = 5  # met last, after the loop has added the rest into its copy
    calls = numpy_kernel_calls(monkeypatch, core.SCATTER_ADD)
    if change == "index out of range":
        before = a.copy()
        with pytest.raises(IndexError):  # the NumPy kernel's error (torch checks the range first too)
            compiled.scatter_add(np, a, index, src, 1)
        np.testing.assert_array_equal(a, before)
    else:
        np.testing.assert_array_equal(compiled.scatter_add(np, a, index, src, 1),
                                      core.SCATTER_ADD.generic(np, a, index, src, 1))
    assert calls[:1] == [core.SCATTER_ADD.qualname]
