"""ember-numba as a plugin: what it overrides (by op name, through the registry), that it
holds after the catalogues are rebuilt, that disabling it gives back ember-norm's NumPy
kernels, and that an op it names but nobody defines is skipped loudly.

Tests for plugins/numba/src/ember_numba/__init__.py (PyTorch counterpart:
aten/src/ATen/native/DispatchStub.h, v2.13).
"""

import inspect
import os
import subprocess
import sys
import types

import pytest

import ember
import ember_numba
from ember.plugins import hookimpl

# (importing ember_numba registers nothing: only its hook does)
KERNELS = ("import inspect, ember, ember_numba\n"
           "ops = ember.plugins.registry.catalogue('ops')\n"
           "served = [(ops[name].obj, kernel) for name, kernel, _ in ember_numba.overrides()]\n"
           "print([op.kernel_for('cpu') is op.generic for op, _ in served],\n"
           "      [inspect.unwrap(op.kernel_for('cpu')) is kernel for op, kernel in served])")


def served():
    """``[(op, kernel, with_fallback)]``: each op ember-numba names, found in the catalogue."""
    ops = ember.plugins.registry.catalogue("ops")
    return [(ops[name].obj, kernel, with_fallback) for name, kernel, with_fallback in ember_numba.overrides()]


def test_it_registers_kernels_and_no_ops():
    info = {i.name: i for i in ember.plugins.list_plugins()}["numba"]
    assert info.status == "ok" and info.distribution == "ember-numba" and info.skipped == []
    assert list(info.registered) == ["kernels"]
    assert sorted(info.registered["kernels"]) == sorted(f"{name}[cpu]" for name, _, _ in ember_numba.overrides())
    for op, kernel, with_fallback in served():
        installed = op.kernels["cpu"]
        assert op.kernel_for("cpu") is installed
        if with_fallback:  # the kernel, with the op's NumPy kernel as what it falls back to
            assert installed.func is kernel and installed.args == (op.generic,) and installed.__wrapped__ is kernel
        else:
            assert installed is kernel


def test_the_override_holds_after_the_catalogues_are_rebuilt():
    ember.plugins.registry.invalidate()
    for op, kernel, _ in served():
        assert inspect.unwrap(op.kernel_for("cpu")) is kernel


def test_dropping_the_catalogues_gives_the_ops_their_kernels_back():
    ops = served()
    with ember.plugins.registry.without("numba"):
        for op, _, _ in ops:
            assert "cpu" not in op.kernels and op.kernel_for("cpu") is op.generic
    for op, kernel, _ in ops:
        assert inspect.unwrap(op.kernel_for("cpu")) is kernel


def make_plugin(name, **hooks):
    plugin = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        setattr(plugin, hook_name, hookimpl(fn))
    return plugin


def test_a_kernel_for_an_op_nobody_defines_is_skipped_loudly(use_plugin):
    def kernel(fallback, xp, x):
        return x

    def ember_register_kernels(register):
        register(kernel, name="renamed::op", device="cpu", with_fallback=True)

    with pytest.warns(RuntimeWarning, match="'renamed::op', which no plugin defines"):
        use_plugin(make_plugin("names_a_missing_op", ember_register_kernels=ember_register_kernels))
    info = {i.name: i for i in ember.plugins.list_plugins()}["names_a_missing_op"]
    assert info.status == "ok" and info.skipped == ["renamed::op[cpu]"]


def test_strict_mode_raises_for_a_kernel_for_an_op_nobody_defines(monkeypatch):
    monkeypatch.setenv("EMBER_STRICT_PLUGINS", "1")
    plugin = make_plugin("strict_missing_op", ember_register_kernels=lambda register: register(
        lambda fallback, xp, x: x, name="renamed::op", device="cpu", with_fallback=True))
    with pytest.raises(ember.plugins.PluginError, match="'renamed::op', which no plugin defines"):
        ember.plugins.register(plugin)
    assert "strict_missing_op" not in [info.name for info in ember.plugins.list_plugins()]
    for op, kernel, with_fallback in served():  # the others' kernels are back, each once
        assert inspect.unwrap(op.kernel_for("cpu")) is kernel
        assert op.kernels["cpu"].args == (op.generic,) if with_fallback else op.kernels["cpu"] is kernel


def test_a_kernel_lands_whichever_plugin_loads_first(use_plugin):
    from ember import library

    def doubled(fallback, xp, x):
        return fallback(xp, x) * 2

    def ember_register_kernels(register):
        register(doubled, name="latecomer::op", device="cpu", with_fallback=True)

    with pytest.warns(RuntimeWarning, match="latecomer::op"):  # before the op's plugin: skipped for now
        use_plugin(make_plugin("kernels_first", ember_register_kernels=ember_register_kernels))

    @library.custom_op("latecomer::op")
    def op(xp, x):
        return x + 1

    use_plugin(make_plugin("op_later", ember_register_ops=lambda register: register(op)))
    assert op(ember.tensor([1.0, 2.0])).tolist() == [4.0, 6.0]
    assert {i.name: i for i in ember.plugins.list_plugins()}["kernels_first"].skipped == []


def run_kernels_check(**env):
    result = subprocess.run([sys.executable, "-c", KERNELS], env={**os.environ, **env}, capture_output=True,
                            text=True, check=True)
    return result.stdout.strip()


def test_disabling_the_plugin_gives_back_the_numpy_kernels():
    count = len(ember_numba.overrides())
    numpy_kernels, compiled_kernels = str([True] * count), str([False] * count)
    assert run_kernels_check(EMBER_DISABLE_PLUGINS="ember-numba") == f"{numpy_kernels} {compiled_kernels}"
    assert run_kernels_check(EMBER_DISABLE_PLUGINS="numba") == f"{numpy_kernels} {compiled_kernels}"
    assert run_kernels_check(EMBER_DISABLE_PLUGINS="") == f"{compiled_kernels} {numpy_kernels}"


def run_cli(*args):
    result = subprocess.run([sys.executable, "-m", "ember.cli", *args], capture_output=True, text=True,
                            check=True)
    return result.stdout


def test_ember_plugins_lists_the_ops_it_serves_on_the_cpu():
    import json

    ember.optim.SGD  # builds the catalogues, which runs ember-numba's hook
    served = sorted(name for name, _, _ in ember_numba.overrides())
    infos = {info["name"]: info for info in json.loads(run_cli("plugins", "--json"))}
    assert served == infos["numba"]["kernels"]["cpu"]
    assert list(infos["numba"]["registered"]) == ["kernels"] and infos["numba"]["skipped"] == []
    text = " ".join(run_cli("plugins").split())  # wrapped to the terminal, never cut
    assert "kernels[cpu]: " in text and all(name in text for name in served)


def test_ember_explain_names_the_plugin_that_replaced_a_kernel():
    out = run_cli("explain", "aten::log_softmax")
    assert "ember_numba/log_softmax.py" in out
    assert "(registered by plugin numba (ember-numba 0.1.0); it replaces the generic kernel on cpu)" in out
    disabled = subprocess.run([sys.executable, "-m", "ember.cli", "explain", "aten::log_softmax"], capture_output=True,
                              text=True, check=True, env={**os.environ, "EMBER_DISABLE_PLUGINS": "ember-numba"})
    assert "kernel[cpu]" not in disabled.stdout
