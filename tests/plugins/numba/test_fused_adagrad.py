"""ember-numba's compiled kernel for ember-optim's fused Adagrad update: registered for
the cpu, the NumPy kernel's results bit for bit (and so the single-tensor loop's, which
tests/plugins/optim/test_fused.py checks for both kernels, with torch), and the NumPy
kernel for the arrays it does not take.

Tests for plugins/numba/src/ember_numba/fused_adagrad.py (PyTorch counterpart:
aten/src/ATen/native/cpu/FusedAdagradKernel.cpp, v2.13).
"""

import functools
import itertools

import numpy as np
import pytest
import torch

import ember
from ember_numba import fused_adagrad as compiled
from ember_optim.fused_adagrad import adagrad_kernel, fused_adagrad_op
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

# maximize, weight decay (1.0: the NumPy kernel's add without a multiply), eps 0 (a zero
# denominator: inf or NaN, as NumPy gives) and a step size of -1 (the NumPy kernel's
# division without a multiply)
OPTIONS = [dict(), dict(weight_decay=1e-2, maximize=True), dict(weight_decay=1.0, eps=0.0),
           dict(clr=-1.0, maximize=True), dict(clr=0.3, eps=1e-6)]
SIZES = [0, 1, 7, 1031]


def steps(kernel, settings, size, dtype, count=4):
    """Parameter and state sum after ``count`` updates by ``kernel``, fresh gradients each."""
    settings = dict(dict(weight_decay=0.0, eps=1e-10, maximize=False, clr=1e-2), **settings)
    rng = np.random.default_rng(size)
    p = values(rng, size, dtype)
    state_sum = np.full_like(p, 0.1)
    s, t, u = np.empty_like(p), np.empty_like(p), np.empty_like(p)
    with np.errstate(all="ignore"):
        for _ in range(count):
            kernel(np, p, values(rng, size, dtype), state_sum, s, t, u, **settings)
    return p, state_sum


def test_it_serves_the_fused_adagrad_op_on_the_cpu():
    ember.optim.Adagrad  # builds the catalogues, which runs ember-numba's hook
    assert fused_adagrad_op.kernel_for("cpu").__wrapped__ is compiled.fused_adagrad
    assert fused_adagrad_op.generic is adagrad_kernel


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("settings", "size"), list(itertools.product(OPTIONS, SIZES)))
def test_the_compiled_loop_gives_the_numpy_kernels_bits(settings, size, dtype, monkeypatch):
    expected = steps(adagrad_kernel, settings, size, dtype)
    assert_same_bits(steps(functools.partial(compiled.fused_adagrad, no_fallback), settings, size, dtype), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fused", [None, True])
def test_the_optimizer_on_the_compiled_kernel_stays_close_to_torch(dtype, fused):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((33, 65)).astype(dtype)
    grads = [rng.standard_normal((33, 65)).astype(dtype) for _ in range(5)]
    results = []
    for lib in (ember, torch):
        w = lib.tensor(start.copy(), requires_grad=True)
        optimizer = lib.optim.Adagrad([w], lr=0.1, lr_decay=0.01, weight_decay=1e-2, fused=fused)
        for g in grads:
            w.grad = lib.tensor(g)
            optimizer.step()
        results.append(w.detach().numpy())
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(*results, **tol)


def test_arrays_it_does_not_take_go_to_the_numpy_kernel(monkeypatch):
    calls = []

    def numpy_kernel(*args, **kwargs):
        calls.append(args)
        return adagrad_kernel(*args, **kwargs)

    a = np.random.default_rng(0).standard_normal((5, 3))
    settings = dict(weight_decay=1e-2, eps=1e-10, maximize=False, clr=0.1)
    # float16; a float64 gradient for float32; a transposed parameter; a transposed state
    for p, g, state_sum in [(a.astype("float16"), a.astype("float16"), a.astype("float16")),
                            (a.astype("float32"), a, a.astype("float32")), (a.T.copy().T, a, a.copy()),
                            (a.copy(), a, a.T.copy().T)]:
        state_sum = np.abs(state_sum)
        expected = (p.copy(), state_sum.copy())
        scratch = [np.empty_like(p) for _ in range(3)]
        adagrad_kernel(np, *expected[:1], g, expected[1], *scratch, **settings)
        compiled.fused_adagrad(numpy_kernel, np, p, g, state_sum, *scratch, **settings)
        assert calls[-1][1] is p
        assert_same_bits((p, state_sum), expected)
    assert len(calls) == 4
