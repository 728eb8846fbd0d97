"""The compiled layer-norm kernels of ember-numba against torch and against
ember-norm's NumPy kernels on the same arrays: values and gradients of input, weight
and bias, float32 and float64, odd shapes, rows far from zero, NaN and infinity, and
the inputs that go back to the NumPy kernel.

Tests for plugins/numba/src/ember_numba/layer_norm.py (PyTorch counterpart:
aten/src/ATen/native/cpu/layer_norm_kernel.cpp, v2.13).
"""

import functools
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor
from ember_norm.ops import layer_norm as ops
from ember_numba import layer_norm as compiled

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-12, atol=1e-12)}
# (input shape, normalized shape): D = 1, one row, D not a multiple of 8, several dims
SHAPES = [((32, 64, 256), (256,)), ((5, 1), (1,)), ((1, 37), (37,)), ((7, 13), (13,)),
          ((3, 257), (257,)), ((2, 3, 4, 5), (4, 5))]


def layer_norm(normalized, affine=True):
    if affine:
        return lambda lib, x, w, b: lib.nn.functional.layer_norm(x, normalized, w, b)
    return lambda lib, x: lib.nn.functional.layer_norm(x, normalized)


def numpy_and_compiled(op, override, *arrays, **attrs):
    """The op's NumPy kernel and the compiled override on the same arrays."""
    return op.generic(np, *arrays, **attrs), override(op.generic, np, *arrays, **attrs)


def assert_same(expected, actual, dtype):
    # atol scales with the largest value: grad_weight and grad_bias are sums over every
    # row, whose rounding grows with the sum, and the two kernels add in different orders.
    tol = TOLERANCES[dtype]
    for e, a in zip(expected, actual):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=tol["rtol"], atol=tol["atol"] * max(1.0, np.abs(e).max()))


def test_the_cpu_kernels_are_the_compiled_ones():
    for op, override in ((ops.layer_norm_stats, compiled.layer_norm_stats), (ops.layer_norm, compiled.layer_norm),
                         (ops.layer_norm_backward, compiled.layer_norm_backward)):
        assert op.kernel_for("cpu").__wrapped__ is override
        # the dispatcher's op is the one the plugin overrode, whichever plugin loaded first
        assert ember.plugins.registry.catalogue("ops")[op.qualname].obj is op


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, normalized", SHAPES)
def test_affine_matches_torch(dtype, shape, normalized):
    x = make_tensor(shape, dtype, seed=0)
    w, b = make_tensor(normalized, dtype, seed=1), make_tensor(normalized, dtype, seed=2)
    tol = TOLERANCES[dtype]
    # weight and bias gradients are sums over every row: two float32 sums of R rows in
    # different orders differ by about sqrt(R) roundings of their scale (torch's own
    # float32 sum is as far from the float64 one: test_gradients_are_as_exact_as_torchs)
    rows = math.prod(shape) // math.prod(normalized)
    grad_atol = tol["atol"] * math.sqrt(rows) if dtype == "float32" else tol["atol"]
    assert_parity(layer_norm(normalized), x, w, b, **tol, grad_rtol=tol["rtol"], grad_atol=grad_atol)


def test_gradients_are_as_exact_as_torchs():
    """On (32, 64, 256) float32, each gradient's largest error against torch's float64
    result is at most a few times torch's own float32 error."""
    shape, normalized = (32, 64, 256), (256,)
    arrays = [make_tensor(shape, "float32", seed=0), make_tensor(normalized, "float32", seed=1),
              make_tensor(normalized, "float32", seed=2)]
    cotangent = np.random.default_rng(5).standard_normal(shape).astype(np.float32)

    def torch_grads(dtype):
        leaves = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        out = torch.nn.functional.layer_norm(leaves[0], normalized, *leaves[1:])
        out.backward(torch.tensor(cotangent, dtype=dtype))
        return [t.grad.double().numpy() for t in leaves]

    leaves = [ember.tensor(a, requires_grad=True) for a in arrays]
    ember.nn.functional.layer_norm(leaves[0], normalized, *leaves[1:]).backward(ember.tensor(cotangent))
    exact, torch32 = torch_grads(torch.float64), torch_grads(torch.float32)
    for name, leaf, reference, theirs in zip(("input", "weight", "bias"), leaves, exact, torch32):
        ours = np.asarray(leaf.grad.numpy(), dtype=np.float64)
        torch_error = np.abs(theirs - reference).max()
        assert np.abs(ours - reference).max() <= 4 * torch_error + 1e-6, name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, normalized", SHAPES[:4])
def test_without_affine_matches_torch(dtype, shape, normalized):
    tol = TOLERANCES[dtype]
    assert_parity(layer_norm(normalized, affine=False), make_tensor(shape, dtype, seed=3), **tol,
                  grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, normalized", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_each_kernel_matches_the_numpy_kernel(dtype, shape, normalized, affine):
    x, g = make_tensor(shape, dtype, seed=4), make_tensor(shape, dtype, seed=5)
    w, b = (make_tensor(normalized, dtype, seed=6), make_tensor(normalized, dtype, seed=7)) if affine else (None, None)
    ndim = len(normalized)
    expected, actual = numpy_and_compiled(ops.layer_norm_stats, compiled.layer_norm_stats, x,
                                          normalized_ndim=ndim, eps=1e-5)
    assert_same(expected, actual, dtype)
    mean, rstd = expected
    expected, actual = numpy_and_compiled(ops.layer_norm, compiled.layer_norm, x, w, b, mean, rstd,
                                          normalized_ndim=ndim, eps=1e-5)
    assert_same([expected], [actual], dtype)
    expected, actual = numpy_and_compiled(ops.layer_norm_backward, compiled.layer_norm_backward, g, x, w, mean,
                                          rstd, normalized_ndim=ndim)
    assert_same(expected, actual, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_far_from_zero_match_torch(dtype):
    # |mean| 1e4 times the spread: E[x^2] - mean^2 would lose every digit in float32;
    # the two passes over each row keep the variance.
    x = (1e3 + 1e-1 * make_tensor((16, 100), "float64", seed=8)).astype(dtype)
    w, b = make_tensor((100,), dtype, seed=1), make_tensor((100,), dtype, seed=2)
    mean, rstd = compiled.layer_norm_stats(ops.layer_norm_stats.generic, np, x, normalized_ndim=1, eps=0.0)
    reference = x.astype(np.float64)
    expected = 1 / np.sqrt(((reference - reference.mean(1, keepdims=True)) ** 2).mean(1))
    np.testing.assert_allclose(rstd.ravel(), expected, rtol=1e-5 if dtype == "float32" else 1e-10)
    # The output is x * rstd - mean * rstd, as torch's kernel writes it; here each product is
    # about 1e4, so the rounding of each (6e-4) shows, and torch fuses the subtraction into
    # an FMA where ember rounds both products: the two differ by up to two such roundings.
    tol = dict(rtol=3e-3, atol=3e-3) if dtype == "float32" else dict(rtol=1e-8, atol=1e-8)
    assert_parity(layer_norm((100,)), x, w, b, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_infinity_propagate_as_in_torch(dtype):
    x = make_tensor((4, 24), dtype, seed=9)
    x[1, 3] = np.nan
    x[2, 5] = np.inf
    x[3, 0] = -np.inf
    w, b = make_tensor((24,), dtype, seed=1), make_tensor((24,), dtype, seed=2)
    out, _ = assert_parity(layer_norm((24,)), x, w, b, **TOLERANCES[dtype])
    assert np.isnan(out.detach().numpy()[1:]).all() and np.isfinite(out.detach().numpy()[0]).all()
    # rstd is NaN where torch's is; the mean of a row with one infinity is that infinity
    # here and in the NumPy kernel (torch's Welford update gives NaN): it only feeds
    # outputs that are NaN either way.
    mean, rstd = compiled.layer_norm_stats(ops.layer_norm_stats.generic, np, x, normalized_ndim=1, eps=1e-5)
    torch_rstd = torch.ops.aten.native_layer_norm(torch.from_numpy(x), [24], None, None, 1e-5)[2]
    np.testing.assert_array_equal(np.isnan(rstd), np.isnan(torch_rstd.numpy()))
    with np.errstate(invalid="ignore"):  # the NumPy kernel's E[x^2] - mean^2 is inf - inf there
        numpy_mean = ops.layer_norm_stats.generic(np, x, normalized_ndim=1, eps=1e-5)[0]
    np.testing.assert_array_equal(mean[1:], numpy_mean[1:])
    # the finite row: float32's mean is summed in float64, float64's in sixteen fixed lanes
    # (NOTE [ float64 row moments in a fixed order ]): within an ulp of the exact sum
    exact = math.fsum(x[0].tolist()) / 24
    assert abs(mean[0, 0] - exact) <= np.spacing(x.dtype.type(exact))


ROWS = """
import sys
import numpy as np
from ember_norm.ops import layer_norm as ops
from ember_numba import layer_norm as compiled
x = np.random.default_rng(12).standard_normal((300, 301)) * 4 + 1.5
mean, rstd = compiled.layer_norm_stats(ops.layer_norm_stats.generic, np, x, normalized_ndim=1, eps=1e-5)
sys.stdout.write(mean.tobytes().hex() + " " + rstd.tobytes().hex())
"""


def float64_stats(jit, cpu=None):
    env = {**os.environ, "EMBER_NUMBA_JIT": "1" if jit else "0"}
    if cpu:  # numba's JIT compiling for another CPU: other SIMD widths
        env.update(NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    result = subprocess.run([sys.executable, "-c", ROWS], env=env, capture_output=True, text=True, check=True)
    mean, rstd = (np.frombuffer(bytes.fromhex(h), np.float64) for h in result.stdout.split())
    return mean, rstd


def test_float64_statistics_are_the_same_bits_in_every_process_and_close_to_the_exact_ones():
    # NOTE [ float64 row moments in a fixed order ]: sums in sixteen lanes written as vector
    # code, so the export, numba's JIT (also compiled for plain x86-64, SSE2's two lanes,
    # where this machine may have AVX-512's eight) and any other process give the same
    # bits; within an ulp or two of the exact mean (math.fsum), as torch's cascaded sum is
    exported = float64_stats(jit=False)
    for other in (float64_stats(jit=True), float64_stats(jit=True, cpu="x86-64")):
        for a, b in zip(exported, other):
            np.testing.assert_array_equal(a, b, strict=True)
    x = np.random.default_rng(12).standard_normal((300, 301)) * 4 + 1.5
    mean, rstd = compiled.layer_norm_stats(ops.layer_norm_stats.generic, np, x, normalized_ndim=1, eps=1e-5)
    np.testing.assert_array_equal(mean.ravel(), exported[0], strict=True)
    exact = np.array([math.fsum(row) / len(row) for row in x.tolist()])
    # rows of mean about 1.5 and deviation 4: cancellation costs a few bits, so the error is
    # measured against the spacing of the values summed, not of the result
    scale = np.spacing(np.abs(x).max())
    assert np.abs(exported[0] - exact).max() <= 2 * scale
    _, torch_mean, torch_rstd = torch.ops.aten.native_layer_norm(torch.from_numpy(x), [301], None, None, 1e-5)
    assert np.abs(exported[0] - torch_mean.numpy().ravel()).max() <= 4 * scale
    np.testing.assert_allclose(exported[1], torch_rstd.numpy().ravel(), rtol=4e-16, atol=0)


@pytest.mark.parametrize("shape", [(0, 5), (2, 0, 5)])
def test_empty_batch_matches_torch(shape):
    x = make_tensor(shape, "float32")
    w, b = make_tensor((5,), "float32", seed=1), make_tensor((5,), "float32", seed=2)
    assert_parity(layer_norm((5,)), x, w, b)


def numpy_kernel_calls(monkeypatch, op):
    """A list that records each call of ``op``'s NumPy kernel, as the op's generic kernel and
    as the fallback of ember-numba's cpu kernel (bound when the kernel was installed)."""
    calls, generic = [], op.generic

    def counted(*args, **kwargs):
        calls.append(op.qualname)
        return generic(*args, **kwargs)
    installed = op.kernel_for("cpu")  # (builds the catalogues, which installs ember-numba's kernels)
    monkeypatch.setattr(op, "generic", counted)
    if isinstance(installed, functools.partial):  # a kernel for another plugin's op, with its fallback
        monkeypatch.setitem(op.kernels, "cpu", functools.partial(installed.func, counted))
        monkeypatch.setattr(op, "_resolved", {})  # the op resolves its kernel again
    return calls


def test_noncontiguous_input_takes_the_numpy_kernel(monkeypatch):
    calls = [numpy_kernel_calls(monkeypatch, op) for op in (ops.layer_norm_stats, ops.layer_norm,
                                                             ops.layer_norm_backward)]
    x = make_tensor((6, 10), "float32", seed=10)
    w, b = make_tensor((10,), "float32", seed=1), make_tensor((10,), "float32", seed=2)
    assert_parity(layer_norm((10,)), x, w, b, noncontiguous=True, **TOLERANCES["float32"])
    assert all(calls)


def test_float16_runs_the_float32_loop(monkeypatch):
    """float16 computes in float32 (its opmath, NOTE [ opmath ] in ember/opmath.py): the
    compiled float32 loop serves it, and the result is rounded once, as torch's."""
    calls = numpy_kernel_calls(monkeypatch, ops.layer_norm_stats)
    x = make_tensor((3, 8), "float16", seed=11)
    assert_parity(layer_norm((8,), affine=False), x, rtol=1e-3, atol=1e-3, grad=False)
    assert not calls
