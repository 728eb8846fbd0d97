"""The compiled SiLU forward of ember-numba against torch, against float64 and against
ember-activation's NumPy kernel on the same arrays: values and gradients, NCHW,
channels_last and other dense layouts, odd sizes (every SIMD remainder), the ends of
exp's range, NaN and infinity, and the inputs that go back to the NumPy kernel.

Tests for plugins/numba/src/ember_numba/silu.py (PyTorch counterpart:
aten/src/ATen/native/cpu/Activation.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.testing import assert_parity, make_tensor
from ember_activation.sigmoid_family import SILU
from ember_numba import silu as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

# where exp(-x) leaves float32's range, and the values around it
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 87.0, -87.0, 88.5, -88.5, 88.72, -88.72,
         -88.73, -89.0, -100.0, 100.0, 20.0, -20.0, 16.6, -16.6]


def grid():
    """Every region of the function: a dense grid over [-100, 100], normal values of
    several scales, and the edges."""
    rng = np.random.default_rng(0)
    return np.concatenate([np.linspace(-100, 100, 200_001), rng.standard_normal(100_000) * 10,
                           rng.standard_normal(100_000), EDGES]).astype(np.float32)


def ulps(values, x):
    """Each value's distance from the float64 SiLU of ``x``, in float32 ulps of it, where
    that is a normal float32 and exp(-x) does not overflow (there, torch and ember both
    give -0 where the exact value is about 1e-37)."""
    with np.errstate(all="ignore"):
        exact = x.astype(np.float64) / (1 + np.exp(-x.astype(np.float64)))
        rounded = np.abs(exact.astype(np.float32))
        kept = np.isfinite(exact) & (rounded >= np.finfo(np.float32).tiny) & (x > -88.7)
        return np.abs(values[kept] - exact[kept]) / np.spacing(rounded[kept]).astype(np.float64)


def test_the_cpu_kernel_is_the_compiled_one():
    assert SILU.kernel_for("cpu") is compiled.silu
    assert ember.plugins.registry.catalogue("ops")[SILU.qualname].obj is SILU


def test_float32_is_as_accurate_as_torch():
    x = grid()
    ours, theirs = ulps(compiled.silu(np, x), x), ulps(torch.nn.functional.silu(torch.from_numpy(x)).numpy(), x)
    assert ours.max() <= max(theirs.max(), 2.5)
    assert ours.mean() <= 1.05 * theirs.mean()


def test_float32_agrees_with_torch_at_the_edges():
    # -0 where exp(-x) overflows, NaN for NaN and -inf, inf for inf, x where exp(-x) is tiny
    x = np.array(EDGES, np.float32)
    ours, expected = compiled.silu(np, x), torch.nn.functional.silu(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(expected))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(expected))
    np.testing.assert_array_equal(ours == 0, expected == 0)
    np.testing.assert_allclose(ours, expected, rtol=2.5e-7, atol=0)  # 2 ulps


def test_float32_matches_the_numpy_kernel():
    x = grid()
    ours, numpy_kernel = compiled.silu(np, x), SILU.generic(np, x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(numpy_kernel))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(numpy_kernel))
    assert ulps(ours, x).max() <= 2.5 and ulps(numpy_kernel, x).max() <= 4  # NumPy's exp: 3.46 at worst


@pytest.mark.parametrize("size", list(range(1, 18)) + [37, 1000])
def test_every_size_matches_torch(monkeypatch, size):
    monkeypatch.setattr(SILU, "generic", no_fallback)
    x = make_tensor((size,), "float32", low=-10, high=10, seed=size)
    assert_parity(lambda lib, t: lib.nn.functional.silu(t), x, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 1, 1, 1), (3, 4, 1, 5), (2, 3, 4, 5, 6)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_images_match_torch_with_gradients_and_keep_their_layout(shape, channels_last):
    formats = {4: "channels_last", 5: "channels_last_3d"}
    fmt = formats[len(shape)] if channels_last else "contiguous_format"

    def silu(lib, t):
        out = lib.nn.functional.silu(t.contiguous(memory_format=getattr(lib, fmt)))
        assert out.is_contiguous(memory_format=getattr(lib, fmt))
        return out
    ours, theirs = assert_parity(silu, make_tensor(shape, "float32", low=-6, high=6, seed=3), rtol=1e-6, atol=1e-7)
    assert ours.stride() == theirs.stride()


def test_channels_last_takes_the_compiled_loop(monkeypatch):
    monkeypatch.setattr(SILU, "generic", no_fallback)
    x = torch.randn(2, 6, 4, 3).contiguous(memory_format=torch.channels_last)
    out = F.silu(ember.tensor(x.numpy()).contiguous(memory_format=ember.channels_last))
    np.testing.assert_allclose(out.numpy(), torch.nn.functional.silu(x).numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: np.linspace(-5, 5, 24, dtype=np.float64),  # float64: NumPy's correctly rounded exp
    lambda: np.linspace(-5, 5, 24, dtype=np.float16),
    lambda: np.linspace(-5, 5, 48, dtype=np.float32)[::2],  # gaps
    lambda: np.zeros((0, 3), np.float32),
], ids=["float64", "float16", "strided", "empty"])
def test_other_inputs_take_the_numpy_kernel(monkeypatch, make):
    x = make()
    expected = SILU.generic(np, x)
    calls = numpy_kernel_calls(monkeypatch, SILU)
    assert_same_bits([compiled.silu(np, x)], [expected])
    assert calls == [SILU.qualname]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_contiguous_and_zero_dim_inputs_match_torch(dtype):
    assert_parity(lambda lib, t: lib.nn.functional.silu(t), make_tensor((5, 6), dtype, seed=4), noncontiguous=True)
    assert_parity(lambda lib, t: lib.nn.functional.silu(t), make_tensor((), dtype, seed=5))


def test_integers_raise_torchs_error():
    assert_parity(lambda lib, t: lib.nn.functional.silu(t), np.arange(4, dtype=np.int64), grad=False)


def test_inplace_writes_the_input():
    x = make_tensor((3, 8, 5), "float32", seed=6)
    expected = torch.nn.functional.silu(torch.from_numpy(x.copy()))
    t = ember.tensor(x)
    assert F.silu(t, inplace=True) is t
    np.testing.assert_allclose(t.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
