"""What a user of a partial install is told to run (ember/plugins/manager.py
``install_hint``): ember's distributions are on no package index, so every hint is the
exact pip command with this Python and the path of the folder in the clone.
"""

import os
import subprocess
import sys

import ember
import ember.cli
from ember.plugins.manager import install_hint


def test_export_to_onnx_without_onnx_is_one_line_with_the_command(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    status = ember.cli.main(["export", "resnet8_cifar", "--format", "onnx", "--out", str(tmp_path / "m.onnx")])
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("threads: ")]
    hint = install_hint("ember-core", extra="onnx")
    assert status == 2 and lines == [f"ember export: ember.onnx.export needs the onnx package (and onnxruntime, to run "
                                     f"what it writes): {hint}"]
    assert hint.startswith(f"{sys.executable} -m pip install -e '") and hint.endswith("/core[onnx]' (ember-core)")


def test_the_onnx_extra_brings_onnxruntime():
    import pathlib
    import tomllib

    core = pathlib.Path(ember.__file__).resolve().parents[2] / "pyproject.toml"
    extra = tomllib.loads(core.read_text())["project"]["optional-dependencies"]["onnx"]
    assert {requirement.split(">")[0] for requirement in extra} == {"onnx", "onnxruntime"}


def test_torchs_data_path_in_a_core_only_install_names_ember_data():
    """NOTE [ from ember.utils.data import DataLoader ]: no entry point loaded is what a
    core-only install sees."""
    code = ("try:\n    from ember.utils.data import DataLoader\nexcept ImportError as exc:\n    print(exc)\n"
            "import ember\nprint(hasattr(ember.nn, 'BatchNorm2d'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "EMBER_PLUGINS_AUTOLOAD": "0"})
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    hint = install_hint("ember-data")
    assert lines[0] == ("cannot import name 'DataLoader' from 'ember.data': 'DataLoader' is provided by the "
                        f"distribution ember-data, which is not installed. Install it with: {hint}")
    assert lines[1] == "False"  # elsewhere a missing name stays an AttributeError
