"""ember-numba as a plugin: what it overrides, that it holds after the catalogues are
rebuilt, and that disabling it gives back ember-norm's NumPy kernels.

Tests for plugins/numba/src/ember_numba/__init__.py (PyTorch counterpart:
aten/src/ATen/native/DispatchStub.h, v2.13).
"""

import os
import subprocess
import sys

import ember
import ember_numba

# (importing ember_numba registers nothing: only its hook does)
KERNELS = ("import ember_numba\n"
           "print([op.kernel_for('cpu') is op.generic for op, _ in ember_numba.overrides()],\n"
           "      [op.kernel_for('cpu') is kernel for op, kernel in ember_numba.overrides()])")


def test_it_registers_kernels_and_no_names():
    info = {i.name: i for i in ember.plugins.list_plugins()}["numba"]
    assert info.status == "ok" and info.distribution == "ember-numba" and info.registered == {}
    for op, kernel in ember_numba.overrides():
        assert op.kernels["cpu"] is kernel and op.kernel_for("cpu") is kernel


def test_the_override_holds_after_the_catalogues_are_rebuilt():
    ember.plugins.registry.invalidate()
    catalogue = ember.plugins.registry.catalogue("ops")
    for op, kernel in ember_numba.overrides():
        assert op.kernel_for("cpu") is kernel
        if op.namespace not in ("native", "optim"):  # dispatch stubs and fused updates are not public names
            assert catalogue[op.qualname].obj is op


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
    served = sorted(op.qualname for op, _ in ember_numba.overrides())
    infos = {info["name"]: info for info in json.loads(run_cli("plugins", "--json"))}
    assert set(served) <= set(infos["numba"]["kernels"]["cpu"])
    assert infos["numba"]["registered"] == {}
    text = " ".join(run_cli("plugins").split())  # wrapped to the terminal, never cut
    assert "kernels[cpu]: " in text and all(name in text for name in served)


def test_ember_explain_names_the_plugin_that_replaced_a_kernel():
    out = run_cli("explain", "aten::log_softmax")
    assert "ember_numba/log_softmax.py" in out
    assert "(registered by plugin numba (ember-numba 0.1.0); it replaces the generic kernel on cpu)" in out
    disabled = subprocess.run([sys.executable, "-m", "ember.cli", "explain", "aten::log_softmax"], capture_output=True,
                              text=True, check=True, env={**os.environ, "EMBER_DISABLE_PLUGINS": "ember-numba"})
    assert "kernel[cpu]" not in disabled.stdout
