"""The example operator plugin (examples/ember-example-ops) installed for real: pip
installs it into a fresh virtual environment, which then uses ``ember.ops.example``
(forward against NumPy, gradients through ``opcheck``) and lists it with its ``ember``
console script. In this process the same plugin runs on the ``fake`` device too.

The venv is layered over the test environment, never over the base interpreter: a
fresh machine's base Python (setuptools 65.5, pip 23.2) cannot build a pyproject with
an SPDX ``license`` string, and the test must not depend on what a machine happens to
have installed there.
"""

import json
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import venv

import fake_device
import numpy as np
import pytest
from fake_dists import run_python

import ember
import ember.testing

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "ember-example-ops"


def softclamp_reference(x, limit=1.0):
    return limit * np.tanh(np.asarray(x, dtype=np.float64) / limit)


def layered_venv(root):
    """A venv layered over the running test environment: its own site-packages first
    (what the test installs), then this environment's (numpy, ember-numpy, pip and a
    setuptools new enough for the SPDX ``license`` field). It never sees the base
    interpreter's site-packages, which differ from machine to machine (a fresh
    machine's base Python has setuptools 65.5 and pip 23.2)."""
    venv.create(root, system_site_packages=False, with_pip=False)
    python = root / "bin" / "python"
    inner = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    outer = sysconfig.get_paths()["purelib"]
    (pathlib.Path(inner) / "_ember_test_layer.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
    return python


def run_checked(command, timeout):
    """Run ``command``; on failure raise with everything it printed, so a broken
    install says why instead of only its exit status."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} exited {result.returncode}:\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A venv seeing this environment's numpy and ember-numpy, with ember-core (for its
    console script) and the example installed from copies (pip builds in the source tree)."""
    root = tmp_path_factory.mktemp("example")
    python = layered_venv(root / "venv")
    shutil.copytree(EXAMPLE, root / "example", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    (root / "core").mkdir()
    shutil.copy(REPO / "core" / "pyproject.toml", root / "core")
    (root / "core" / "README.md").write_text("ember-core\n")
    shutil.copytree(REPO / "core" / "src", root / "core" / "src",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    run_checked([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                 "--disable-pip-version-check", root / "core", root / "example"], timeout=180)
    return root / "venv" / "bin"


def test_the_installed_plugin_computes_softclamp_and_its_gradient(env):
    result = run_python("""
        import json, sys
        import numpy as np
        import ember
        import ember.testing
        import ember_example_ops
        x = ember.tensor([[-3.0, -0.5, 0.0], [0.25, 1.0, 40.0]], requires_grad=True)
        y = ember.ops.example.softclamp(x, limit=2.0)
        y.sum().backward()
        samples = [((ember.tensor(np.linspace(-4, 4, 7)),), {"limit": 1.5}), ((ember.tensor(0.3),), {}),
                   ((ember.tensor([[1, -2]]),), {"limit": 0.5})]
        reference = lambda x, limit=1.0: limit * np.tanh(x / limit)
        ember.testing.opcheck(ember.ops.example.softclamp, samples, reference)
        op = ember.ops.example.softclamp
        print(json.dumps({"y": y.tolist(), "grad": x.grad.tolist(), "grad_fn": y.grad_fn.name(),
                          "cpu_kernel_used": op.kernel_for("cpu") is op.kernels["cpu"],
                          "module": ember_example_ops.__file__, "plugin": op.plugin}))
    """, python=env / "python")
    got = json.loads(result.stdout)
    x = np.array([[-3.0, -0.5, 0.0], [0.25, 1.0, 40.0]])
    np.testing.assert_allclose(got["y"], softclamp_reference(x, 2.0), rtol=1e-6)
    np.testing.assert_allclose(got["grad"], 1 - np.tanh(x / 2.0) ** 2, rtol=1e-5, atol=1e-7)
    assert got["grad_fn"] == "SoftclampBackward0" and got["cpu_kernel_used"] and got["plugin"] == "example"
    assert str(env.parent) in got["module"]


def test_the_console_script_lists_and_explains_the_plugin(env):
    listing = subprocess.run([env / "ember", "plugins", "--json"], capture_output=True, text=True, timeout=60)
    infos = {info["name"]: info for info in json.loads(listing.stdout)}
    assert isinstance(infos["example"].pop("import_seconds"), float)  # (NOTE [ Failing plugins ])
    assert infos["example"] == {"name": "example", "distribution": "ember-example-ops", "version": "0.1.0",
                                "module": "ember_example_ops", "status": "ok", "error": None,
                                "registered": {"ops": ["example::softclamp"]}, "skipped": [],
                                "kernels": {}}
    explain = subprocess.run([env / "ember", "explain", "example::softclamp"], capture_output=True, text=True,
                             timeout=60)
    lines = explain.stdout.splitlines()
    assert lines[0] == "example::softclamp(x, *, limit=1.0) -> Tensor"
    assert "plugin:      example (ember-example-ops 0.1.0)" in explain.stdout
    assert sum("ember_example_ops/ops.py:" in line for line in lines) == 3  # generic, cpu, backward


def test_the_plugin_module_imports_nothing_at_top_level(env):
    result = run_python("""
        import sys
        import ember
        before = set(sys.modules)
        import ember_example_ops
        print(sorted(set(sys.modules) - before))
    """, python=env / "python")
    assert result.stdout.strip() == "['ember_example_ops']"


def test_the_generic_kernel_serves_other_devices():
    """In-process, from the source tree: the generic kernel on ``fake`` agrees with the
    cpu kernel, and the backward passes gradcheck there too."""
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        import ember_example_ops
        from ember_example_ops.ops import softclamp
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
    ember.plugins.register(ember_example_ops, name="example_src")
    ember.plugins.register(fake_device)
    try:
        samples = [((ember.tensor(np.linspace(-3, 3, 5)),), {"limit": 2.0}), ((ember.tensor([[0.5], [-9.0]]),), {})]
        assert ember.testing.opcheck(softclamp, samples, softclamp_reference, devices=["fake"])
        x = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda t: softclamp(t.to("fake"), limit=0.7).cpu(), (x,))
    finally:
        ember.plugins.unregister(fake_device)
        ember.plugins.unregister(name="example_src")
