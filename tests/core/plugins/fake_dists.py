"""Test helpers: fake installed distributions with ``ember`` entry points, and a way
to run Python in a fresh process that sees them.

A directory holding ``<name>-<version>.dist-info/`` (METADATA, entry_points.txt) and
the plugin modules is, once on ``sys.path`` (``PYTHONPATH``), an installed distribution
as far as ``importlib.metadata`` is concerned; no pip needed.
"""

import json
import os
import subprocess
import sys
import textwrap


def make_distribution(root, name, version="1.0", modules=None, entry_points=None):
    """Write a distribution ``name`` under ``root``: ``modules`` maps module names to
    source; ``entry_points`` maps entry-point names (group ``ember``) to module names."""
    root.mkdir(parents=True, exist_ok=True)
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = ["[ember]"] + [f"{ep} = {target}" for ep, target in (entry_points or {}).items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return root


def run_python(code, path=(), env=None, python=sys.executable, check=True):
    """Run ``code`` in a new interpreter with ``path`` prepended to PYTHONPATH."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    full_env["PYTHONPATH"] = os.pathsep.join([str(p) for p in path] + [full_env.get("PYTHONPATH", "")])
    full_env.update(env or {})
    result = subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env=full_env, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"subprocess failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def plugins_json(result):
    """``{name: info}`` from the ``ember plugins --json`` output in ``result.stdout``."""
    return {info["name"]: info for info in json.loads(result.stdout)}
