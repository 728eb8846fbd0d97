"""ember-numba's compiled kernel for ember-optim's RMSprop update: registered for the cpu,
the NumPy kernel's results bit for bit (and so the single-tensor loop's, which
tests/plugins/optim/test_fused.py checks for both kernels, with torch), and the NumPy
kernel for the arrays it does not take.

Tests for plugins/numba/src/ember_numba/fused_rmsprop.py (PyTorch counterpart:
aten/src/ATen/native/cpu/FusedAdamKernel.cpp, v2.13; torch has no fused RMSprop).
"""

import functools
import itertools

import numpy as np
import pytest
import torch

import ember
from ember_numba import fused_rmsprop as compiled
from ember_optim.fused_rmsprop import fused_rmsprop_op, rmsprop_kernel
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

# centered or not, momentum or not, maximize, weight decay (1.0: the NumPy kernel's add
# without a multiply), lerp_'s two forms (1 - alpha below and above 0.5), eps 0 (a zero
# denominator: inf or NaN, as NumPy gives) and an lr of -1
OPTIONS = [dict(), dict(momentum=0.9, weight_decay=1e-2), dict(centered=True, maximize=True),
           dict(alpha=0.3, centered=True, momentum=0.5), dict(weight_decay=1.0, eps=0.0, maximize=True),
           dict(alpha=0.0, centered=True, lr=-1.0), dict(momentum=0.9, lr=-1.0, eps=0.0)]
SIZES = [0, 1, 7, 1031]


def options(settings):
    return dict(dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                     maximize=False), **settings)


def steps(kernel, settings, size, dtype, count=4):
    """Parameter and state after ``count`` updates by ``kernel``, fresh gradients each."""
    settings = options(settings)
    rng = np.random.default_rng(size)
    p = values(rng, size, dtype)
    square_avg = np.zeros_like(p)
    grad_avg = np.zeros_like(p) if settings["centered"] else None
    buffer = np.zeros_like(p) if settings["momentum"] > 0 else None
    s, t, u = np.empty_like(p), np.empty_like(p), np.empty_like(p)
    with np.errstate(all="ignore"):
        for _ in range(count):
            kernel(np, p, values(rng, size, dtype), square_avg, grad_avg, buffer, s, t, u, **settings)
    return p, square_avg, grad_avg, buffer


def test_it_serves_the_fused_rmsprop_op_on_the_cpu():
    ember.optim.RMSprop  # builds the catalogues, which runs ember-numba's hook
    assert fused_rmsprop_op.kernel_for("cpu").__wrapped__ is compiled.fused_rmsprop
    assert fused_rmsprop_op.generic is rmsprop_kernel


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("settings", "size"), list(itertools.product(OPTIONS, SIZES)))
def test_the_compiled_loop_gives_the_numpy_kernels_bits(settings, size, dtype, monkeypatch):
    expected = steps(rmsprop_kernel, settings, size, dtype)
    assert_same_bits(steps(functools.partial(compiled.fused_rmsprop, no_fallback), settings, size, dtype), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("settings", [dict(), dict(centered=True, momentum=0.9, weight_decay=1e-2)])
def test_the_optimizer_on_the_compiled_kernel_stays_close_to_torch(dtype, settings):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((33, 65)).astype(dtype)
    grads = [rng.standard_normal((33, 65)).astype(dtype) for _ in range(5)]
    results = []
    for lib in (ember, torch):
        w = lib.tensor(start.copy(), requires_grad=True)
        optimizer = lib.optim.RMSprop([w], lr=1e-2, **settings)
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
        return rmsprop_kernel(*args, **kwargs)

    a = np.random.default_rng(0).standard_normal((5, 3))
    settings = options(dict(centered=True, momentum=0.9))
    # float16; a float64 gradient for float32; a transposed parameter; a transposed state
    for p, g, state in [(a.astype("float16"), a.astype("float16"), a.astype("float16")),
                        (a.astype("float32"), a, a.astype("float32")), (a.T.copy().T, a, a.copy()),
                        (a.copy(), a, a.T.copy().T)]:
        got = (p, np.abs(state), state, state.copy())
        expected = tuple(x.copy() for x in got)
        scratch = [np.empty_like(p) for _ in range(3)]
        with np.errstate(invalid="ignore"):  # the square average less the grad's: may be < 0
            rmsprop_kernel(np, expected[0], g, *expected[1:], *scratch, **settings)
            compiled.fused_rmsprop(numpy_kernel, np, p, g, *got[1:], *scratch, **settings)
        assert calls[-1][1] is p
        assert_same_bits(got, expected)
    assert len(calls) == 4
