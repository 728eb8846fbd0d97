"""The loops compiled ahead of time: the build exported every declared signature, a call
finds its export by its arguments' numba types, the exports compute what numba's JIT
computes bit for bit, other types still run (through the JIT), and a convolutional train
step runs without importing numba.

Tests for plugins/numba/src/ember_numba/ahead_of_time.py and build_loops.py (PyTorch
counterpart: torch/utils/cpp_extension.py, v2.13).
"""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from ember_numba import ahead_of_time, build_loops
from ember_numba.ahead_of_time import Loops, code


def test_the_build_exported_every_declared_signature():
    module = ahead_of_time.built()
    assert module is not None, "ember_numba._compiled was not built (pip install ./plugins/numba builds it)"
    declared = list(build_loops.declared())
    assert len(declared) >= 50  # two dtypes for each of the 27 loops the kernels call, less SiLU's float64
    for name, loop, _, signature in declared:
        export = ahead_of_time.export_name(name, loop, build_loops.short_codes(signature))
        assert callable(getattr(module, export, None)), f"{export} ({signature}) is missing"


def test_the_build_is_as_new_as_its_loops():
    # an editable install keeps its build when the loops change (NOTE [ A build older
    # than its loops ]): rebuild with pip install -e plugins/numba
    recorded = ahead_of_time.recorded_sources(ahead_of_time.built())
    assert "ember_numba.jit" in recorded and "ember_numba.im2col_loops" in recorded
    assert ahead_of_time.changed_sources(recorded) == []
    assert ahead_of_time.changed_sources({**recorded, "ember_numba.jit": 0}) == ["ember_numba.jit"]
    assert ahead_of_time.changed_sources({"ember_numba.gone_loops": 0}) == ["ember_numba.gone_loops"]


def test_a_build_older_than_its_loops_is_set_aside_for_the_jit(monkeypatch):
    monkeypatch.setattr(ahead_of_time, "_built", False)
    monkeypatch.setattr(ahead_of_time, "changed_sources", lambda recorded: ["ember_numba.silu_loops"])
    with pytest.warns(RuntimeWarning, match=r"built from other sources than today's \(ember_numba.silu_loops\)"):
        assert ahead_of_time.built() is None
    silu_loop = Loops("ember_numba.silu_loops").silu_loop
    x = np.linspace(-3, 3, 9, dtype=np.float32)
    out = np.empty_like(x)
    silu_loop(x, out)
    assert list(silu_loop._by_key.values()) == [silu_loop.jit()]
    np.testing.assert_allclose(out, x / (1 + np.exp(-x)), rtol=1e-6)


def test_every_loop_a_kernel_calls_is_declared():
    # a loop with no declaration would run through the JIT, and bring numba back
    for name in build_loops.loops_modules():
        module = __import__(name, fromlist=["*"])
        for attribute, value in vars(module).items():
            if getattr(value, "py_func", None) is not None and value.py_func.__module__ == name \
                    and not attribute.startswith("_"):
                assert getattr(value, "ahead_of_time", None), f"{name}.{attribute} declares no signature"


@pytest.mark.parametrize("value", [
    np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float64).T, np.zeros((4, 6))[:, ::2], np.zeros(5, np.int64),
    np.zeros((2, 1, 3), np.float32), np.zeros(0, np.float32), np.ones((), np.float64), 3, 2.5, True,
    np.float32(1.5), np.float64(2.0), np.int64(7), np.bool_(False)])
def test_the_short_code_is_numbas_type(value):
    assert code(value) == build_loops._short(numba.typeof(value), numba.types)


def test_arrays_the_build_never_compiles_for_have_no_code():
    readonly = np.zeros(3, np.float32)
    readonly.flags.writeable = False
    swapped = np.zeros(3, np.dtype(">f4"))
    assert code(readonly) is None and code(swapped) is None and code("text") is None


def rows(rng, dtype, shape=(6, 37)):
    return rng.standard_normal(shape).astype(dtype)


def both_ways(loop, make_args):
    """Run ``loop`` through its export and through numba's JIT on fresh copies of the
    same arguments; returns both argument lists and both results."""
    codes = tuple(map(code, make_args()))
    export = loop.resolve(codes)
    assert type(export).__name__ == "builtin_function_or_method", f"{loop} has no export for {codes}"
    exported_args, jit_args = make_args(), make_args()
    return exported_args, jit_args, export(*exported_args), loop.jit()(*jit_args)


def assert_same(first, second, exact):
    for a, b in zip(first, second):
        if not isinstance(a, np.ndarray):
            assert a == b
        elif exact or a.dtype.kind != "f":
            np.testing.assert_array_equal(a, b, strict=True)
        else:  # reassociated sums: the order is LLVM's, in either build
            np.testing.assert_allclose(a, b, rtol=4 * np.finfo(a.dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exports_compute_what_the_jit_computes(dtype):
    # one loop of each flavour: fast-math sums (layer norm), sums in fixed vector lanes
    # (layer norm's float64 moments), exact arithmetic (SGD, im2col),
    # the vectorized exp (log_softmax, cross-entropy), integer targets and a result (nll).
    # The exact loops agree bit for bit; loops compiled with reassociation (jit.py's flags)
    # may add in another order, within a few units in the last place.
    def seeded():
        return np.random.default_rng(0)

    cases = [
        (Loops("ember_numba.layer_norm_loops").row_moments, False,
         lambda: (rows(seeded(), dtype), dtype(1e-5), np.empty(6, dtype), np.empty(6, dtype))),
        (Loops("ember_numba.fused_sgd_loops").sgd_loop, True,
         lambda: (rows(seeded(), dtype, 50), rows(seeded(), dtype, 50), rows(seeded(), dtype, 50), dtype(-0.1),
                  dtype(0.9), dtype(1.0), dtype(1e-4), True, False, True, False)),
        (Loops("ember_numba.im2col_loops").im2col_loop, True,
         lambda: (rows(seeded(), dtype, 2 * 3 * 5 * 6), np.empty(3 * 9 * 2 * 3 * 3, dtype),
                  2, 3, 5, 6, 3, 3, 2, 2, 1, 1, 1, 1, 3, 3)),
        (Loops("ember_numba.log_softmax_loops").forward_rows, True,
         lambda: (rows(seeded(), dtype) * 30, np.empty((6, 37), dtype))),
        (Loops("ember_numba.log_softmax_loops").cross_entropy_rows, True,
         lambda: (rows(seeded(), dtype), np.array([0, 36, -100, 5, 7, 1]), -100, np.empty(6, dtype))),
        (Loops("ember_numba.nll_loss_loops").forward, False,
         lambda: (rows(seeded(), dtype), np.array([0, 36, -100, 5, 7, 1]), np.ones(37, dtype), False, -100,
                  np.empty(6, dtype), np.empty(2, dtype))),
    ]
    if dtype == np.float64:  # float64 row moments in sixteen lanes, the same bits from either build
        cases.append((Loops("ember_numba.layer_norm_loops").ordered_row_moments, True,
                      lambda: (rows(seeded(), dtype, (6, 37)) * 10 + 3, 1e-5, np.empty(6), np.empty(6))))
    for loop, exact, make_args in cases:
        exported_args, jit_args, exported, jitted = both_ways(loop, make_args)
        assert exported == jitted, loop
        assert_same(exported_args, jit_args, exact)


def test_other_argument_types_run_through_the_jit():
    forward_rows = Loops("ember_numba.log_softmax_loops").forward_rows
    x = np.random.default_rng(1).standard_normal((37, 6)).T  # F-ordered: no export takes it
    out, expected = np.empty((6, 37)), np.empty((6, 37))
    forward_rows(x, out)
    forward_rows(np.ascontiguousarray(x), expected)
    np.testing.assert_allclose(out, expected, rtol=4e-16, atol=0)  # strided rows sum in another order
    assert list(forward_rows._by_key.values()) == [forward_rows.jit(), forward_rows.resolve((code(out), code(out)))]


STEP = """
import sys
import ember
import ember.nn.functional as F

ember.manual_seed(0)
model = ember.nn.Sequential(
    ember.nn.Conv2d(3, 8, 3, padding=1), ember.nn.BatchNorm2d(8), ember.nn.SiLU(), ember.nn.MaxPool2d(2),
    ember.nn.Conv2d(8, 8, 3, stride=2, padding=1), ember.nn.GroupNorm(2, 8), ember.nn.ReLU(),
    ember.nn.Flatten(), ember.nn.LayerNorm(32), ember.nn.Linear(32, 5))
for memory_format in (ember.contiguous_format, ember.channels_last):
    model = model.to(memory_format=memory_format)
    for optimizer in (ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                      ember.optim.Adam(model.parameters()), ember.optim.RMSprop(model.parameters()),
                      ember.optim.Adagrad(model.parameters())):
        x = ember.randn(4, 3, 8, 8).contiguous(memory_format=memory_format)
        loss = F.cross_entropy(model(x), ember.tensor([0, 1, 2, 3])) + F.nll_loss(
            F.log_softmax(model(x), dim=1), ember.tensor([4, 3, 2, 1]))
        # a dense head: class weights, per-pixel targets, log_softmax over channels
        maps, labels = model[2](model[1](model[0](x))).contiguous(), ember.randint(0, 8, (4, 8, 8))
        loss = loss + F.cross_entropy(maps, labels, weight=ember.ones(8)) + F.nll_loss(
            F.log_softmax(maps, dim=1), labels) + F.cross_entropy(model(x), ember.tensor([0, 1, 2, 3]),
                                                                  weight=ember.ones(5))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
print("numba" in sys.modules, "llvmlite" in sys.modules)
"""


def run_step(**env):
    result = subprocess.run([sys.executable, "-c", STEP], env={**os.environ, **env}, capture_output=True, text=True,
                            check=True)
    return result.stdout.strip()


def test_a_train_step_runs_without_importing_numba():
    # NOTE [ Why ahead of time ]: numba and LLVM cost about 120 MB of the process
    assert run_step() == "False False"


def test_EMBER_NUMBA_JIT_sends_every_call_through_numbas_jit():
    assert run_step(EMBER_NUMBA_JIT="1") == "True True"
