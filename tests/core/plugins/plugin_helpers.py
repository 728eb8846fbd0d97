"""Helpers the plugin and registry tests share: in-process plugins made from hook
functions, and ember run in a fresh interpreter.

PyTorch counterpart: none (test helpers for ember's plugin system).
"""

import json
import os
import subprocess
import sys
import textwrap
import types

from ember.plugins import hookimpl


def make_plugin(name, **hooks):
    """A module-like plugin whose hook functions are ``hooks``."""
    plugin = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        setattr(plugin, hook_name, hookimpl(fn))
    return plugin


def run_ember(code, **env):
    """Run ``code`` in a fresh interpreter with the given EMBER_* variables; its stdout as JSON."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    full_env.update(env)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env=full_env, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])
