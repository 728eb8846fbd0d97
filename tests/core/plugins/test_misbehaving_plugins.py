"""Plugins that misbehave without raising an Exception (ember/plugins/manager.py, NOTE
[ Failing plugins ]): ``sys.exit`` in a hook or at import is a broken plugin, named,
never the end of the program; a slow import is named while it runs and in ``ember plugins``.

Installed plugins are fake distributions seen by a fresh interpreter (fake_dists.py).
"""

import pytest
from fake_dists import make_distribution, plugins_json, run_python

from ember.plugins.manager import SLOW_IMPORT_SECONDS

EXITING_HOOK = """
    import sys
    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_ops(register):
        sys.exit(3)
"""

EXITING_IMPORT = """
    raise SystemExit("cannot find my config")
"""

SLOW_IMPORT = f"""
    import time
    time.sleep({SLOW_IMPORT_SECONDS} + 0.5)
"""

LIST_PLUGINS = "import ember.cli, sys; sys.exit(ember.cli.main(['plugins', '--json']))"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    make_distribution(root, "ember-exithook", modules={"ember_exithook": EXITING_HOOK},
                      entry_points={"exithook": "ember_exithook"})
    make_distribution(root, "ember-exitimport", modules={"ember_exitimport": EXITING_IMPORT},
                      entry_points={"exitimport": "ember_exitimport"})
    return root


def test_sys_exit_in_a_plugin_is_a_broken_plugin_not_the_end_of_the_program(site):
    result = run_python("""
        import ember
        print((ember.ones(2) * 3).tolist())
        print("still running")
    """, path=[site])
    assert result.stdout.splitlines() == ["[3.0, 3.0]", "still running"]
    assert "ember plugin 'exithook' failed during registration" in result.stderr
    assert "plugin 'exithook' failed in ember_register_ops: SystemExit: the plugin called sys.exit(3)" in result.stderr
    assert "ember plugin 'exitimport' failed during import" in result.stderr
    assert "sys.exit('cannot find my config')" in result.stderr


def test_ember_plugins_lists_an_exiting_plugin_by_name(site):
    result = run_python(LIST_PLUGINS, path=[site], check=False)
    assert result.returncode == 1  # a broken plugin
    infos = plugins_json(result)
    assert infos["exithook"]["status"] == "broken" and "sys.exit(3)" in infos["exithook"]["error"]
    assert infos["exitimport"]["status"] == "broken"


def test_strict_mode_names_the_exiting_plugin(site):
    result = run_python("import ember; ember.ones(1)", path=[site], env={"EMBER_STRICT_PLUGINS": "1",
                                                                          "EMBER_DISABLE_PLUGINS": "exitimport"},
                        check=False)
    assert result.returncode == 1 and "PluginError" in result.stderr and "'exithook'" in result.stderr


def test_a_slow_plugin_import_is_named_while_it_runs_and_listed(tmp_path):
    make_distribution(tmp_path, "ember-slow", modules={"ember_slow": SLOW_IMPORT}, entry_points={"slow": "ember_slow"})
    result = run_python(LIST_PLUGINS, path=[tmp_path])
    assert ("ember: still importing plugin 'slow' (distribution ember-slow, ember_slow) after "
            f"{SLOW_IMPORT_SECONDS:.0f} s ...") in result.stderr
    infos = plugins_json(result)
    assert infos["slow"]["status"] == "ok" and infos["slow"]["import_seconds"] >= SLOW_IMPORT_SECONDS
    assert infos["numpy"]["import_seconds"] < SLOW_IMPORT_SECONDS
    listing = run_python("import ember.cli, sys; sys.exit(ember.cli.main(['plugins']))", path=[tmp_path])
    (line,) = [line for line in listing.stdout.splitlines() if line.startswith("slow ")]
    assert "(import took" in line


def test_the_debug_variable_names_every_import():
    result = run_python("import ember; ember.ones(1)", env={"EMBER_PLUGINS_DEBUG": "1"})
    assert "ember: importing plugin 'numpy' (distribution ember-numpy" in result.stderr
    assert "ember: imported plugin 'numpy'" in result.stderr
    assert "ember: importing" not in run_python("import ember; ember.ones(1)").stderr
