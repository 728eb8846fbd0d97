"""ember-numba's compiled kernel for ember-optim's fused SGD update: registered for the
cpu, the NumPy kernel's results bit for bit (and so the single-tensor loop's, which
tests/plugins/optim/test_fused.py checks for both kernels, with torch), and the NumPy
kernel for the arrays it does not take.

Tests for plugins/numba/src/ember_numba/fused_sgd.py (PyTorch counterpart:
aten/src/ATen/native/cpu/FusedSGDKernel.cpp, v2.13).
"""

import functools
import itertools

import numpy as np
import pytest
import torch

import ember
from ember_numba import fused_sgd as compiled
from ember_optim.fused_sgd import fused_sgd_op, sgd_kernel
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

# momentum 0 and > 0, dampening, nesterov, weight decay, maximize, and an lr of -1
# (the NumPy kernel's add without a multiply)
OPTIONS = [dict(lr=0.1, momentum=0.0), dict(lr=0.01, momentum=0.9), dict(lr=0.1, momentum=0.8, dampening=0.3),
           dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
           dict(lr=0.1, momentum=0.5, dampening=0.5, weight_decay=0.3, maximize=True),
           dict(lr=0.1, momentum=0.0, weight_decay=1.0, maximize=True), dict(lr=-1.0, momentum=0.9)]
SIZES = [0, 1, 7, 1031]


def options(settings, first):
    return dict(dict(dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False), **settings, first=first)


def steps(kernel, settings, size, dtype, count=4):
    """Parameter and buffer after ``count`` updates by ``kernel``, fresh gradients each."""
    rng = np.random.default_rng(size)
    p = values(rng, size, dtype)
    buffer = np.empty_like(p) if settings["momentum"] != 0 else None
    s, t = np.empty_like(p), np.empty_like(p)
    with np.errstate(all="ignore"):
        for step in range(count):
            kernel(np, p, values(rng, size, dtype), buffer, s, t, **options(settings, first=step == 0))
    return p, buffer


def test_it_serves_the_fused_sgd_op_on_the_cpu():
    ember.optim.SGD  # builds the catalogues, which runs ember-numba's hook
    assert fused_sgd_op.kernel_for("cpu").__wrapped__ is compiled.fused_sgd
    assert fused_sgd_op.generic is sgd_kernel


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("settings", "size"), list(itertools.product(OPTIONS, SIZES)))
def test_the_compiled_loop_gives_the_numpy_kernels_bits(settings, size, dtype, monkeypatch):
    expected = steps(sgd_kernel, settings, size, dtype)
    assert_same_bits(steps(functools.partial(compiled.fused_sgd, no_fallback), settings, size, dtype), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_optimizer_on_the_compiled_kernel_stays_close_to_torch(dtype):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((33, 65)).astype(dtype)
    grads = [rng.standard_normal((33, 65)).astype(dtype) for _ in range(5)]
    results = []
    for lib in (ember, torch):
        w = lib.tensor(start.copy(), requires_grad=True)
        optimizer = lib.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2)
        for g in grads:
            w.grad = lib.tensor(g)
            optimizer.step()
        results.append(w.detach().numpy())
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(*results, **tol)


def arrays_it_does_not_take(rng):
    """(param, grad, buffer): float16; a float64 gradient for float32; a transposed
    parameter; a transposed gradient."""
    a = rng.standard_normal((5, 3))
    return [(a.astype("float16"), a.astype("float16"), a.astype("float16")),
            (a.astype("float32"), a.astype("float64"), a.astype("float32")),
            (a.T.copy().T, a, a.copy()), (a.copy(), a.T.copy().T, a.copy())]


def test_arrays_it_does_not_take_go_to_the_numpy_kernel(monkeypatch):
    calls = []

    def numpy_kernel(*args, **kwargs):
        calls.append(args)
        return sgd_kernel(*args, **kwargs)

    for p, g, buffer in arrays_it_does_not_take(np.random.default_rng(0)):
        expected = (p.copy(), buffer.copy())
        sgd_kernel(np, expected[0], g, expected[1], np.empty_like(p), np.empty_like(p),
                   **options(dict(lr=0.1, momentum=0.9), first=False))
        compiled.fused_sgd(numpy_kernel, np, p, g, buffer, np.empty_like(p), np.empty_like(p),
                           **options(dict(lr=0.1, momentum=0.9), first=False))
        assert calls[-1][1] is p
        assert_same_bits((p, buffer), expected)
    assert len(calls) == 4
