"""The compiled SiLU forward and backward of ember-numba against torch, against float64
and against ember-activation's NumPy kernels on the same arrays: values and gradients,
NCHW, channels_last and other dense layouts, odd sizes (every SIMD remainder), the ends
of exp's range, NaN and infinity, and the inputs that go back to the NumPy kernels.

Tests for plugins/numba/src/ember_numba/silu.py (PyTorch counterpart:
aten/src/ATen/native/cpu/Activation.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.testing import assert_parity, make_tensor
from ember_activation.sigmoid_family import SILU, SILU_BACKWARD
from ember_numba import silu as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback
from tests.plugins.numba.test_layer_norm import numpy_kernel_calls

# where exp(-x) leaves float32's range, and the values around it
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 87.0, -87.0, 88.5, -88.5, 88.72, -88.72,
         -88.73, -89.0, -100.0, 100.0, 20.0, -20.0, 16.6, -16.6]


def compiled_silu(*args, **kwargs):
    """ember-numba's ``silu``, falling back to the op's NumPy kernel, as installed."""
    return compiled.silu(SILU.generic, *args, **kwargs)


def compiled_silu_backward(*args, **kwargs):
    """ember-numba's ``silu_backward``, falling back to the op's NumPy kernel, as installed."""
    return compiled.silu_backward(SILU_BACKWARD.generic, *args, **kwargs)


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


def test_the_cpu_kernels_are_the_compiled_ones():
    assert SILU.kernel_for("cpu").__wrapped__ is compiled.silu
    assert SILU_BACKWARD.kernel_for("cpu").__wrapped__ is compiled.silu_backward
    assert ember.plugins.registry.catalogue("ops")[SILU.qualname].obj is SILU


def test_float32_is_as_accurate_as_torch():
    x = grid()
    ours, theirs = ulps(compiled_silu(np, x), x), ulps(torch.nn.functional.silu(torch.from_numpy(x)).numpy(), x)
    assert ours.max() <= max(theirs.max(), 2.5)
    assert ours.mean() <= 1.05 * theirs.mean()


def test_float32_agrees_with_torch_at_the_edges():
    # -0 where exp(-x) overflows, NaN for NaN and -inf, inf for inf, x where exp(-x) is tiny
    x = np.array(EDGES, np.float32)
    ours, expected = compiled_silu(np, x), torch.nn.functional.silu(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(expected))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(expected))
    np.testing.assert_array_equal(ours == 0, expected == 0)
    np.testing.assert_allclose(ours, expected, rtol=2.5e-7, atol=0)  # 2 ulps


def test_float32_matches_the_numpy_kernel():
    x = grid()
    ours, numpy_kernel = compiled_silu(np, x), SILU.generic(np, x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(numpy_kernel))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(numpy_kernel))
    assert ulps(ours, x).max() <= 2.5 and ulps(numpy_kernel, x).max() <= 4  # NumPy's exp: 3.46 at worst


@pytest.mark.parametrize("size", list(range(1, 18)) + [37, 1000])
def test_every_size_matches_torch(monkeypatch, size):
    monkeypatch.setattr(SILU, "generic", no_fallback)
    monkeypatch.setattr(SILU_BACKWARD, "generic", no_fallback)  # assert_parity checks the gradient too
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


def test_channels_last_takes_the_compiled_loops(monkeypatch):
    monkeypatch.setattr(SILU, "generic", no_fallback)
    monkeypatch.setattr(SILU_BACKWARD, "generic", no_fallback)
    x = torch.randn(2, 6, 4, 3).contiguous(memory_format=torch.channels_last).requires_grad_()
    ours = ember.tensor(x.detach().numpy()).contiguous(memory_format=ember.channels_last).requires_grad_()
    out, expected = F.silu(ours), torch.nn.functional.silu(x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-7)
    grad = torch.randn(2, 6, 4, 3).contiguous(memory_format=torch.channels_last)
    out.backward(ember.tensor(grad.numpy()).contiguous(memory_format=ember.channels_last))
    expected.backward(grad)
    assert ours.grad.is_contiguous(memory_format=ember.channels_last)
    np.testing.assert_allclose(ours.grad.numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-6)


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
    assert_same_bits([compiled_silu(np, x)], [expected])
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


# --- the backward ------------------------------------------------------------------


def gradient_errors(values, grad, x):
    """Each gradient's distance from the float64 one, in float32 ulps of the size of its
    terms, ``|grad| * s * (1 + |x| * (1 - s))``: ``1 + x * (1 - s)`` cancels near
    x = -1.28, and there every float32 formula (torch's too) loses all its digits of a
    near-zero result. Where exp(-x) overflows (x below -80) all give 0."""
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        s = 1 / (1 + np.exp(-x64))
        exact = grad * s * (1 + x64 * (1 - s))
        scale = np.abs(grad * s * (1 + np.abs(x64 * (1 - s)))).astype(np.float32)
    kept = np.isfinite(exact) & (scale >= np.finfo(np.float32).tiny) & (x > -80)
    return np.abs(values[kept] - exact[kept]) / np.spacing(scale[kept]).astype(np.float64)


def torch_gradient(grad, x):
    return torch.ops.aten.silu_backward(torch.from_numpy(grad), torch.from_numpy(x)).numpy()


def test_the_gradient_is_as_accurate_as_torchs():
    x = grid()
    grad = np.random.default_rng(7).standard_normal(x.size).astype(np.float32)
    ours = gradient_errors(compiled_silu_backward(np, grad, x), grad, x)
    theirs = gradient_errors(torch_gradient(grad, x), grad, x)
    assert ours.max() <= theirs.max() + 1  # both 16.3: where s rounds to 1 (x near 16.6)
    assert ours.mean() <= 1.05 * theirs.mean()
    # most gradients are torch's bit for bit (same formula and order; exp differs in the last bit)
    assert np.mean(compiled_silu_backward(np, grad, x) == torch_gradient(grad, x)) > 0.85


def test_the_gradient_matches_the_numpy_kernel():
    x = grid()
    grad = np.random.default_rng(8).standard_normal(x.size).astype(np.float32)
    ours, numpy_kernel = compiled_silu_backward(np, grad, x), SILU_BACKWARD.generic(np, grad, x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(numpy_kernel))
    assert gradient_errors(ours, grad, x).mean() <= gradient_errors(numpy_kernel, grad, x).mean()
    np.testing.assert_allclose(ours, numpy_kernel, rtol=2e-5, atol=2e-6)


def test_the_gradient_agrees_with_torch_at_the_edges():
    # 0 where exp(-x) overflows, NaN at NaN and at both infinities, grad where s is 1
    x = np.array(EDGES, np.float32)
    grad = np.linspace(-2, 3, x.size, dtype=np.float32)
    ours, expected = compiled_silu_backward(np, grad, x), torch_gradient(grad, x)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(expected))
    np.testing.assert_array_equal(ours == 0, expected == 0)
    np.testing.assert_allclose(ours, expected, rtol=5e-7, atol=1e-42)  # products near the subnormals


@pytest.mark.parametrize("make", [
    lambda: (np.linspace(-5, 5, 24), np.linspace(-5, 5, 24)),  # float64: the NumPy kernel's exp
    lambda: (np.linspace(-5, 5, 24, dtype=np.float16), np.linspace(-5, 5, 24, dtype=np.float16)),
    lambda: (np.linspace(-5, 5, 48, dtype=np.float32)[::2], np.linspace(-1, 1, 24, dtype=np.float32)),  # gaps
    lambda: (np.ones((2, 3, 4, 5), np.float32),  # grad contiguous, x channels_last
             np.linspace(-5, 5, 120, dtype=np.float32).reshape(2, 4, 5, 3).transpose(0, 3, 1, 2)),
    lambda: (np.broadcast_to(np.float32(1.5), (4, 6)), np.linspace(-5, 5, 24, dtype=np.float32).reshape(4, 6)),
    lambda: (np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)),
], ids=["float64", "float16", "strided", "two-layouts", "broadcast-grad", "empty"])
def test_other_gradients_take_the_numpy_kernel(monkeypatch, make):
    grad, x = make()
    expected = SILU_BACKWARD.generic(np, grad, x)
    calls = numpy_kernel_calls(monkeypatch, SILU_BACKWARD)
    assert_same_bits([compiled_silu_backward(np, grad, x)], [expected])
    assert calls == [SILU_BACKWARD.qualname]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_second_derivatives_match_torch(dtype):
    # the backward op is differentiable (NOTE [ Two ops per activation ]); float32 runs its forward compiled
    def grad_of_grad(lib, t):
        (first,) = lib.autograd.grad(lib.nn.functional.silu(t).sum(), t, create_graph=True)
        return first * t
    assert_parity(grad_of_grad, make_tensor((3, 7), dtype, low=-6, high=6, seed=9), rtol=1e-5, atol=1e-6)


def test_the_export_computes_what_the_jit_computes():
    loop = compiled.loops.silu_backward_loop
    x = grid()
    grad = np.random.default_rng(10).standard_normal(x.size).astype(np.float32)
    exported, jitted = np.empty_like(x), np.empty_like(x)
    loop.resolve(("f4x1C",) * 3)(grad, x, exported)
    loop.jit()(grad, x, jitted)
    assert_same_bits([exported], [jitted])
