"""ember-numba's compiled kernel for ember-optim's fused Adam and AdamW update: registered
for the cpu, the NumPy kernel's results bit for bit (and so the single-tensor loop's,
which tests/plugins/optim/test_fused.py checks for both kernels, with torch), and the
NumPy kernel for the arrays it does not take.

Tests for plugins/numba/src/ember_numba/fused_adam.py (PyTorch counterpart:
aten/src/ATen/native/cpu/FusedAdamKernel.cpp, v2.13).
"""

import functools
import itertools

import numpy as np
import pytest

import ember
from ember_numba import fused_adam as compiled
from ember_optim.fused_adam import adam_kernel, fused_adam_op
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

# Adam and AdamW, amsgrad, maximize, L2 and decoupled decay, lerp_'s two forms (1 - beta1
# below and above 0.5), and eps 0 (a zero denominator: inf or NaN, as NumPy gives)
OPTIONS = [dict(), dict(weight_decay=1e-2, amsgrad=True), dict(maximize=True, beta1=0.3, beta2=0.9),
           dict(decoupled_weight_decay=True, weight_decay=0.1, amsgrad=True, maximize=True),
           dict(decoupled_weight_decay=True, weight_decay=0.0, eps=0.0), dict(weight_decay=1.0, beta1=0.5)]
SIZES = [0, 1, 7, 1031]


def steps(kernel, settings, size, dtype, count=4):
    """Parameter and state after ``count`` updates by ``kernel``, fresh gradients each."""
    settings = dict(dict(beta1=0.9, beta2=0.999, lr=1e-2, weight_decay=0.0, eps=1e-8, maximize=False,
                         decoupled_weight_decay=False, amsgrad=False), **settings)
    amsgrad = settings.pop("amsgrad")
    rng = np.random.default_rng(size)
    p = values(rng, size, dtype)
    m, v = np.zeros_like(p), np.zeros_like(p)
    v_max = np.zeros_like(p) if amsgrad else None
    s, t = np.empty_like(p), np.empty_like(p)
    with np.errstate(all="ignore"):
        for step in range(1, count + 1):
            kernel(np, p, values(rng, size, dtype), m, v, v_max, s, t, **settings,
                   step_size=settings["lr"] / (1 - settings["beta1"] ** step),
                   bias_correction2_sqrt=(1 - settings["beta2"] ** step) ** 0.5)
    return p, m, v, v_max


def test_it_serves_the_fused_adam_op_on_the_cpu():
    ember.optim.Adam  # builds the catalogues, which runs ember-numba's hook
    assert fused_adam_op.kernel_for("cpu").__wrapped__ is compiled.fused_adam
    assert fused_adam_op.generic is adam_kernel


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("settings", "size"), list(itertools.product(OPTIONS, SIZES)))
def test_the_compiled_loop_gives_the_numpy_kernels_bits(settings, size, dtype, monkeypatch):
    expected = steps(adam_kernel, settings, size, dtype)
    assert_same_bits(steps(functools.partial(compiled.fused_adam, no_fallback), settings, size, dtype), expected)


def test_arrays_it_does_not_take_go_to_the_numpy_kernel(monkeypatch):
    calls = []

    def numpy_kernel(*args, **kwargs):
        calls.append(args)
        return adam_kernel(*args, **kwargs)

    a = np.random.default_rng(0).standard_normal((5, 3))
    settings = dict(beta1=0.9, beta2=0.999, lr=1e-2, weight_decay=0.0, eps=1e-8, maximize=False,
                    decoupled_weight_decay=False, step_size=0.1, bias_correction2_sqrt=0.5)
    # float16; a float64 gradient for float32; a transposed parameter; a transposed state
    for p, g, m in [(a.astype("float16"), a.astype("float16"), a.astype("float16")),
                    (a.astype("float32"), a, a.astype("float32")), (a.T.copy().T, a, a.copy()),
                    (a.copy(), a, a.T.copy().T)]:
        expected = (p.copy(), m.copy(), np.abs(m))
        adam_kernel(np, expected[0], g, *expected[1:], None, np.empty_like(p), np.empty_like(p), **settings)
        got = (p, m, np.abs(m))
        compiled.fused_adam(numpy_kernel, np, p, g, *got[1:], None, np.empty_like(p), np.empty_like(p), **settings)
        assert calls[-1][1] is p
        assert_same_bits(got, expected)
    assert len(calls) == 4
