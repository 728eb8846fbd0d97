"""Tests for ember/plugins/manager.py: lazy discovery, the kill switches, failing and
clashing plugins, and pluggy kept off the per-op hot path.

Installed-plugin behaviour is tested in fresh processes that see fake distributions
(a ``*.dist-info`` with an ``ember`` entry point, put on PYTHONPATH; see fake_dists.py).
"""

import sys

import pytest
from fake_dists import make_distribution, plugins_json, run_python
from plugin_helpers import make_plugin

import ember
from ember.library import custom_op
from ember.plugins import PluginError, registry

GOOD = """
    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_ops(register):
        from ember import library

        @library.custom_op("goodns::double", promote="default")
        def double(xp, x):
            return x * 2

        register(double)
"""

BROKEN_IMPORT = """
    raise ImportError("this plugin needs libfoo, which is missing")
"""

RAISING_HOOK = """
    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_ops(register):
        raise ValueError("the hook fell over")
"""

SECOND_CPU = """
    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_backends(register):
        from ember_numpy.backend import make_backend
        register(make_backend())  # "cpu" again: ember-numpy owns it
"""

LIST_PLUGINS = "import ember.cli, sys; sys.exit(ember.cli.main(['plugins', '--json']))"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One directory with five fake distributions."""
    root = tmp_path_factory.mktemp("site")
    make_distribution(root, "ember-good", modules={"ember_good": GOOD}, entry_points={"good": "ember_good"})
    make_distribution(root, "ember-cupy", version="0.9", modules={"ember_cupy": BROKEN_IMPORT},
                      entry_points={"cupy": "ember_cupy"})
    make_distribution(root, "ember-raising", modules={"ember_raising": RAISING_HOOK},
                      entry_points={"raising": "ember_raising"})
    make_distribution(root, "ember-secondcpu", modules={"ember_secondcpu": SECOND_CPU},
                      entry_points={"secondcpu": "ember_secondcpu"})
    return root


def op_plugin(name, qualname):
    @custom_op(qualname, promote="default")
    def kernel(xp, x):
        return x + 1

    return make_plugin(name, ember_register_ops=lambda register: register(kernel))


# --- lazy discovery -------------------------------------------------------------------

def test_import_ember_loads_no_plugin_and_reads_no_entry_point():
    result = run_python("""
        import sys
        import ember
        print('ember_numpy' in sys.modules, 'importlib.metadata' in sys.modules)
        ember.ones(2)
        print('ember_numpy' in sys.modules)
    """)
    assert result.stdout.split() == ["False", "False", "True"]


def test_import_time_has_no_entry_point_scan():
    result = run_python("import ember", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    assert "ember" in imported and "ember.plugins" in imported
    assert "importlib.metadata" not in imported and "ember_numpy" not in imported


def test_catalogues_are_cached_and_ops_never_call_a_hook():
    calls = []
    undo = registry.pm.add_hookcall_monitoring(lambda name, impls, kwargs: calls.append(name),
                                               lambda outcome, name, impls, kwargs: None)
    try:
        registry.invalidate()
        x = ember.ones(3, requires_grad=True)  # the first need rebuilds the catalogues
        assert "ember_register_backends" in calls and "ember_register_ops" in calls
        calls.clear()
        for _ in range(3):
            y = (x * 2 + ember.randn(3)).exp().sum()
            y.backward()
            ember.zeros(2, 2).to(ember.float64)
            ember.ops.aten.mul(x, x)
        assert calls == []
    finally:
        undo()


# --- installed plugins ----------------------------------------------------------------

def test_broken_plugins_warn_and_the_others_still_load(site):
    result = run_python(f"""
        import warnings
        warnings.simplefilter("always")
        import ember, ember.cli, sys
        print(ember.ops.goodns.double(ember.tensor([1, 2])).tolist())
        try:
            ember.ones(1, device="cuda")
        except RuntimeError as e:
            print("CUDA-ERROR", e, file=sys.stderr)
        {LIST_PLUGINS}
    """, path=[site], check=False)
    assert result.returncode == 1, result.stderr  # `ember plugins` exits 1 when a plugin is broken
    infos = plugins_json(type("R", (), {"stdout": result.stdout.split("\n", 1)[1]}))
    assert result.stdout.startswith("[2, 4]")
    assert infos["good"]["status"] == "ok" and infos["good"]["registered"] == {"ops": ["goodns::double"]}
    assert infos["good"]["distribution"] == "ember-good" and infos["good"]["version"] == "1.0"
    assert infos["numpy"]["status"] == "ok" and infos["numpy"]["registered"] == {"backends": ["cpu"]}
    assert infos["cupy"]["status"] == "broken" and "needs libfoo" in infos["cupy"]["error"]
    assert infos["raising"]["status"] == "broken" and "the hook fell over" in infos["raising"]["error"]
    assert infos["secondcpu"]["status"] == "clash" and infos["secondcpu"]["registered"] == {}
    assert "'numpy'" in infos["secondcpu"]["error"] and "'secondcpu'" in infos["secondcpu"]["error"]
    for name in ("cupy", "raising"):
        assert f"RuntimeWarning: ember plugin '{name}' failed" in result.stderr
    assert "RuntimeWarning: ember plugin 'secondcpu' clashes with another plugin" in result.stderr
    assert "CUDA-ERROR" in result.stderr and "ember-cupy" in result.stderr and "broken" in result.stderr


def test_strict_mode_raises_the_first_failure(site):
    result = run_python("import ember; ember.ones(1)", path=[site], env={"EMBER_STRICT_PLUGINS": "1"},
                        check=False)
    assert result.returncode != 0
    assert "PluginError" in result.stderr and "'cupy'" in result.stderr and "needs libfoo" in result.stderr


def test_disable_plugins_skips_them_unimported(site):
    result = run_python(f"""
        import sys, warnings
        warnings.simplefilter("error")  # nothing left to warn about
        import ember, ember.cli
        ember.ones(1)
        assert "ember_cupy" not in sys.modules and "ember_good" not in sys.modules
        {LIST_PLUGINS}
    """, path=[site], env={"EMBER_DISABLE_PLUGINS": "cupy, good,raising,ember-secondcpu"})
    infos = plugins_json(result)
    expected = {"ember": "ok", "numpy": "ok", "good": "disabled", "cupy": "disabled", "raising": "disabled",
                "secondcpu": "disabled"}
    # Other first-party plugins installed beside these (norm, loss, ...) are not this test's business.
    assert {name: infos[name]["status"] for name in expected if name in infos} == expected


def test_autoload_off_loads_no_entry_point(site):
    result = run_python(f"""
        import sys
        import ember, ember.cli
        try:
            ember.ones(1)
        except RuntimeError as e:
            print("ERROR", e, file=sys.stderr)
        import ember_numpy
        ember.plugins.register(ember_numpy)
        assert ember.ones(2).tolist() == [1.0, 1.0]
        assert "ember_good" not in sys.modules
        {LIST_PLUGINS}
    """, path=[site], env={"EMBER_PLUGINS_AUTOLOAD": "0"})
    assert "no ember backend is installed for device type 'cpu'" in result.stderr
    assert "pip install -e '" in result.stderr and "plugins/numpy' (ember-numpy)" in result.stderr
    infos = plugins_json(result)
    assert sorted(infos) == ["ember", "ember_numpy"]
    assert infos["ember_numpy"]["distribution"] is None and infos["ember_numpy"]["registered"] == {
        "backends": ["cpu"]}


def test_one_plugin_name_from_two_distributions_is_reported(tmp_path):
    make_distribution(tmp_path, "ember-first", modules={"ember_first": GOOD}, entry_points={"dup": "ember_first"})
    make_distribution(tmp_path, "ember-second", modules={"ember_second": "x = 1\n"},
                      entry_points={"dup": "ember_second"})
    result = run_python(LIST_PLUGINS, path=[tmp_path], check=False)
    assert result.returncode == 1
    broken = [info for info in plugins_json(result).values() if info["status"] == "broken"]
    assert len(broken) == 1 and broken[0]["name"] == "dup"
    assert "ember-first" in broken[0]["error"] and "ember-second" in broken[0]["error"]


def test_plugin_modules_import_nothing_heavy_at_top_level():
    from importlib.metadata import entry_points

    modules = sorted({ep.value for ep in entry_points(group="ember")})
    assert "ember_numpy" in modules
    result = run_python(f"""
        import importlib, sys
        import ember
        for name in {modules!r}:
            before = set(sys.modules)
            importlib.import_module(name)
            extra = sorted(m for m in set(sys.modules) - before if m.split(".")[0] != name.split(".")[0])
            print(name, extra)
    """)
    for line in result.stdout.splitlines():
        assert line.endswith(" []"), line


# --- in-process plugins ---------------------------------------------------------------

def test_register_and_unregister_an_in_process_plugin():
    plugin = op_plugin("inproc", "inproc::plus1")
    name = ember.plugins.register(plugin)
    try:
        assert name == "inproc"
        assert ember.ops.inproc.plus1(ember.tensor([1.0])).tolist() == [2.0]
        info = {i.name: i for i in ember.plugins.list_plugins()}["inproc"]
        assert (info.status, info.distribution, info.registered) == ("ok", None, {"ops": ["inproc::plus1"]})
    finally:
        ember.plugins.unregister(plugin)
    assert "inproc" not in [i.name for i in ember.plugins.list_plugins()]
    with pytest.raises(AttributeError, match="has no attribute 'plus1'"):
        ember.ops.inproc.plus1


def test_two_plugins_registering_one_name_is_an_error_naming_both():
    first = op_plugin("clash_first", "clash::op")
    ember.plugins.register(first)
    try:
        with pytest.raises(PluginError, match="'clash::op' is registered by both plugin 'clash_first' and "
                                              "plugin 'clash_second'"):
            ember.plugins.register(op_plugin("clash_second", "clash::op"))
        assert "clash_second" not in [i.name for i in ember.plugins.list_plugins()]
        assert registry.catalogue("ops")["clash::op"].plugin == "clash_first"
    finally:
        ember.plugins.unregister(first)


def test_a_core_op_name_cannot_be_taken_over():
    from ember.dispatcher import Op

    impostor = Op("aten::mul", lambda xp, a, b: a, plugin=None)
    plugin = make_plugin("impostor", ember_register_ops=lambda register: register(impostor))
    with pytest.raises(PluginError, match=r"'aten::mul' is registered by both plugin 'ember' \(ember-core\) and "
                                          r"plugin 'impostor'; 'ember' keeps it"):
        ember.plugins.register(plugin)
    assert ember.ops.aten.mul(ember.tensor([2.0]), ember.tensor([3.0])).tolist() == [6.0]


def test_a_failing_hook_raises_naming_the_plugin_and_keeps_nothing():
    def hook(register):
        register(custom_op("halfway::op")(lambda xp, x: x))
        raise KeyError("oops")

    with pytest.raises(PluginError, match="plugin 'halfway' failed in ember_register_ops: KeyError"):
        ember.plugins.register(make_plugin("halfway", ember_register_ops=hook))
    assert "halfway::op" not in registry.catalogue("ops")
    assert "halfway" not in [i.name for i in ember.plugins.list_plugins()]


def test_one_plugin_registering_a_name_twice_is_an_error():
    op = custom_op("twice::op")(lambda xp, x: x)

    def hook(register):
        register(op)
        register(op)

    with pytest.raises(PluginError, match="registers op 'twice::op' twice"):
        ember.plugins.register(make_plugin("twice", ember_register_ops=hook))


def test_a_missing_backend_names_the_distribution_to_install():
    registry.plugin_infos()  # discovery first: ``without`` takes out a plugin already loaded
    cupy_hint = r"device type 'cuda'.*pip install -e .*plugins/cupy' \(ember-cupy\)"
    with ember.plugins.registry.without("cupy"), pytest.raises(RuntimeError, match=cupy_hint):
        ember.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="device string: npu .*no ember plugin registers a backend.*ember plugins"):
        ember.zeros(2, device="npu")


def test_a_registered_but_unavailable_backend_says_so():
    import numpy as np

    from ember.device import Backend

    backend = Backend("sleepy", np, to_host=lambda a: a, from_host=lambda a, index=None: a,
                      is_available=lambda: False)
    plugin = make_plugin("sleepy", ember_register_backends=lambda register: register(backend))
    ember.plugins.register(plugin)
    try:
        with pytest.raises(RuntimeError, match="installed, but no sleepy device is available"):
            ember.zeros(2, device="sleepy")
    finally:
        ember.plugins.unregister(plugin)


def test_the_plugin_manager_is_not_imported_twice():
    # plugin modules share the one registry, whichever way they import it
    import ember.plugins.manager as manager

    assert isinstance(ember.plugins.registry, manager.PluginRegistry)
    assert sys.modules["ember.plugins"].registry is registry


# --- clashes between installed plugins (NOTE [ Name clashes between plugins ]) ----------

SQUATTER = """
    from ember.plugins import hookimpl

    @hookimpl
    def ember_register_modules(register):
        import ember

        class ReLU(ember.nn.Module):
            def forward(self, x):
                return x

        class Doubler(ember.nn.Module):
            def forward(self, x):
                return x * 2

        register(ReLU, name="ReLU")
        register(Doubler, name="Doubler")
"""


def test_a_third_party_plugin_cannot_take_a_name_from_a_first_party_one(tmp_path):
    # "ember-aaa" sorts before "ember-activation": the rule is not alphabetical.
    make_distribution(tmp_path, "ember-aaa", modules={"ember_aaa": SQUATTER}, entry_points={"aaa": "ember_aaa"})
    result = run_python(f"""
        import warnings
        warnings.simplefilter("always")
        import ember, ember.cli
        print(type(ember.nn.ReLU()).__module__, ember.nn.GELU.__name__, ember.nn.Doubler.__name__)
        {LIST_PLUGINS}
    """, path=[tmp_path], check=False)
    assert result.returncode == 1, result.stderr  # `ember plugins` reports the clash in its status
    first, listing = result.stdout.split("\n", 1)
    assert first.split() == ["ember_activation.modules.rectifiers", "GELU", "Doubler"]
    infos = plugins_json(type("R", (), {"stdout": listing}))
    assert infos["activation"]["status"] == "ok" and "ReLU" in infos["activation"]["registered"]["modules"]
    assert len(infos["activation"]["registered"]["modules"]) > 10  # all its other registrations too
    assert infos["aaa"]["status"] == "clash" and infos["aaa"]["registered"] == {"modules": ["Doubler"]}
    assert infos["aaa"]["error"] == ("module 'ReLU' is registered by both plugin 'activation' (ember-activation) "
                                     "and plugin 'aaa' (ember-aaa); 'activation' keeps it (loaded first)")
    assert "RuntimeWarning: ember plugin 'aaa' clashes with another plugin" in result.stderr


def test_the_plugins_table_shows_the_clash(tmp_path):
    make_distribution(tmp_path, "ember-aaa", modules={"ember_aaa": SQUATTER}, entry_points={"aaa": "ember_aaa"})
    result = run_python("import ember.cli, sys; sys.exit(ember.cli.main(['plugins']))", path=[tmp_path],
                        check=False)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("aaa "))
    assert lines[row].split() == ["aaa", "ember-aaa", "1.0", "clash"]
    assert lines[row + 1].startswith("    error: module 'ReLU' is registered by both plugin 'activation'")
    assert "    modules: Doubler" in lines


def test_strict_mode_never_crashes_ember_plugins(site):
    result = run_python("import ember.cli, sys; sys.exit(ember.cli.main(['plugins']))", path=[site],
                        env={"EMBER_STRICT_PLUGINS": "1"}, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    rows = {line.split()[0]: line.split()[-1] for line in result.stdout.splitlines() if not line.startswith(" ")}
    assert rows["cupy"] == "broken" and rows["raising"] == "broken" and rows["good"] == "ok"


def test_strict_mode_still_raises_for_a_clash_outside_ember_plugins(tmp_path):
    make_distribution(tmp_path, "ember-aaa", modules={"ember_aaa": SQUATTER}, entry_points={"aaa": "ember_aaa"})
    result = run_python("import ember; ember.nn.ReLU", path=[tmp_path], env={"EMBER_STRICT_PLUGINS": "1"},
                        check=False)
    assert result.returncode != 0 and "PluginError" in result.stderr and "'ReLU'" in result.stderr


def test_first_party_is_the_repositorys_distributions():
    import pathlib
    import tomllib

    from ember.plugins.manager import FIRST_PARTY

    repo = pathlib.Path(__file__).parents[3]
    names = {tomllib.loads(path.read_text())["project"]["name"]
             for path in [repo / "core" / "pyproject.toml", *repo.glob("plugins/*/pyproject.toml"),
                          *repo.glob("zoo/*/pyproject.toml")]}
    assert FIRST_PARTY == names, "ember/plugins/manager.py FIRST_PARTY must list the repository's distributions"


@pytest.mark.parametrize("distribution, folder", [("ember-norm", "plugins/norm"), ("ember-zoo-yolo", "zoo/yolo"),
                                                  ("ember-core", "core")])
def test_install_hints_say_how_to_install_from_the_repository(distribution, folder, monkeypatch):
    """ember's distributions are on no package index: the hint is the exact command, with
    this Python's pip and the path of the folder in the clone ember runs from."""
    import pathlib

    from ember.plugins import manager
    from ember.plugins.lookup import missing_message
    from ember.plugins.manager import install_hint

    clone = pathlib.Path(__file__).resolve().parents[3]
    assert manager.clone_root() == clone and (clone / folder / "pyproject.toml").is_file()
    assert install_hint(distribution) == f"{sys.executable} -m pip install -e '{clone / folder}' ({distribution})"
    assert install_hint("ember-core", extra="onnx") == f"{sys.executable} -m pip install -e '{clone}/core[onnx]' " \
                                                       "(ember-core)"
    assert install_hint("ember-thirdparty") == "pip install ember-thirdparty"
    with registry.without("norm"):
        message = missing_message("BatchNorm2d", "ember.nn", "ember-norm")
    assert message.endswith(f"Install it with: {install_hint('ember-norm')}")
    monkeypatch.setattr(manager, "clone_root", lambda: None)  # installed from wheels: what to run in a clone
    assert install_hint(distribution) == (f"pip install -e '{folder}' in a clone of the ember repository "
                                          f"({distribution} is on no package index)")
