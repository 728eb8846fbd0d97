"""Tests for the ember.nn registries (ember/plugins/forwarding.py's table, the
module-level ``__getattr__`` of ember/nn/__init__.py and ember/nn/functional.py, and the
core's ``ember_register_modules`` in ember/native/support/builtin_plugin.py)."""

from importlib import import_module

import pytest
from plugin_helpers import make_plugin, run_ember

import ember
from ember.native.support.builtin_plugin import CORE_MODULES
from ember.plugins import PluginError, registry
from ember.plugins.forwarding import PROVIDED_BY as _PROVIDED_BY
from ember.plugins.manager import install_hint

PROVIDED_BY = {catalogue: _PROVIDED_BY[catalogue] for catalogue in ("modules", "functionals")}

# --- the core's own classes ---------------------------------------------------------------

def test_core_modules_are_registered_by_the_core_plugin():
    catalogue = registry.catalogue("modules")
    for path in CORE_MODULES:
        module_name, class_name = path.split(":")
        cls = getattr(import_module(module_name), class_name)
        assert catalogue[class_name].obj is cls
        assert catalogue[class_name].plugin == "ember"
        assert getattr(ember.nn, class_name) is cls


def test_create_builds_a_registered_module_by_name():
    seq = ember.nn.create("Sequential")
    assert type(seq) is ember.nn.Sequential and len(seq) == 0
    modules = ember.nn.create("ModuleDict", modules={"a": ember.nn.Module()})
    assert list(modules.keys()) == ["a"]


def test_unknown_names_raise_like_a_module_attribute():
    with pytest.raises(AttributeError, match="^module 'ember.nn' has no attribute 'NoSuchLayer'$"):
        ember.nn.NoSuchLayer  # noqa: B018
    with pytest.raises(AttributeError, match="^module 'ember.nn.functional' has no attribute 'no_such_fn'$"):
        ember.nn.functional.no_such_fn  # noqa: B018
    with pytest.raises(KeyError, match="NoSuchLayer"):
        ember.nn.create("NoSuchLayer")
    assert not hasattr(ember.nn, "__wrapped__")


# --- plugins registering modules and functionals ----------------------------------------

def test_a_plugin_module_class_is_reachable_by_name_and_create(use_plugin):
    class Doubler(ember.nn.Module):
        def __init__(self, factor=2.0):
            super().__init__()
            self.factor = factor

        def forward(self, x):
            return x * self.factor

    def softsquare(x):
        return x * x

    plugin = use_plugin(make_plugin("registry_test",
                                    ember_register_modules=lambda register: register(Doubler),
                                    ember_register_functionals=lambda register: register(softsquare)))
    assert ember.nn.Doubler is Doubler
    assert "Doubler" in dir(ember.nn)
    assert ember.nn.create("Doubler", factor=3.0)(ember.tensor([1.0])).tolist() == [3.0]
    assert ember.nn.functional.softsquare is softsquare
    assert registry.catalogue("modules")["Doubler"].plugin == "registry_test"
    ember.plugins.unregister(plugin)
    with pytest.raises(AttributeError):
        ember.nn.Doubler  # noqa: B018
    with pytest.raises(AttributeError):
        ember.nn.functional.softsquare  # noqa: B018


def test_a_plugin_name_found_once_is_remembered_until_the_plugins_change():
    functional = ember.nn.functional
    registry.invalidate()
    assert "cross_entropy" not in vars(functional)
    found = functional.cross_entropy  # through the catalogue: module __getattr__
    assert vars(functional)["cross_entropy"] is found  # from now on a plain attribute
    registry.invalidate()
    assert "cross_entropy" not in vars(functional)
    assert functional.cross_entropy is found


def test_a_plugin_may_not_take_a_core_name():
    plugin = make_plugin("registry_clash",
                         ember_register_modules=lambda register: register(type("Sequential", (ember.nn.Module,), {})))
    with pytest.raises(PluginError, match="'Sequential' is registered by both plugin 'ember' \\(ember-core\\) "
                                          "and plugin 'registry_clash'; 'ember' keeps it"):
        ember.plugins.register(plugin)
    assert ember.nn.Sequential is ember.nn.modules.container.Sequential


# --- first-party names whose distribution is missing ------------------------------------

PROBE = """
    import json, warnings
    warnings.simplefilter("ignore")
    import ember
    out = {}
    for space, name in %r:
        try:
            getattr(ember.nn if space == "nn" else ember.nn.functional, name)
            out[name] = "found"
        except AttributeError as exc:
            out[name] = str(exc)
    print(json.dumps(out))
"""

NAMES = [("nn", "BatchNorm2d"), ("nn", "LayerNorm"), ("nn", "ReLU"), ("nn", "GELU"), ("nn", "CrossEntropyLoss"),
         ("nn", "MSELoss"), ("functional", "batch_norm"), ("functional", "layer_norm"), ("functional", "gelu"),
         ("functional", "cross_entropy"), ("functional", "mse_loss"), ("nn", "Sequential")]


def expected_distribution(space, name):
    return PROVIDED_BY["modules" if space == "nn" else "functionals"].get(name)


def test_names_of_disabled_plugins_name_their_distribution():
    found = run_ember(PROBE % NAMES, EMBER_DISABLE_PLUGINS="ember-norm,ember-activation,ember-loss")
    for space, name in NAMES:
        distribution = expected_distribution(space, name)
        if distribution is None:
            assert found[name] == "found"
            continue
        assert found[name].startswith(f"module 'ember.nn{'' if space == 'nn' else '.functional'}' has no "
                                      f"attribute '{name}'")
        assert f"distribution {distribution}" in found[name] and "disabled" in found[name]


def test_names_of_uninstalled_plugins_say_what_to_install():
    found = run_ember(PROBE % NAMES, EMBER_PLUGINS_AUTOLOAD="0")
    for space, name in NAMES:
        distribution = expected_distribution(space, name)
        if distribution is not None:
            folder = "plugins/" + distribution.removeprefix("ember-")
            assert found[name].endswith(f"is provided by the distribution {distribution}, which is not installed. "
                                        f"Install it with: {install_hint(distribution)}")
            assert f"/{folder}' ({distribution})" in found[name]


def test_the_table_knows_every_name_the_first_party_plugins_register():
    first_party = {"ember-norm", "ember-activation", "ember-loss"}
    infos = [i for i in ember.plugins.list_plugins() if i.distribution in first_party and i.status == "ok"]
    for info in infos:
        for catalogue in ("modules", "functionals"):
            for name in info.registered.get(catalogue, ()):
                assert PROVIDED_BY[catalogue].get(name) == info.distribution, (catalogue, name)
    # and the table names no distribution other than the first-party ones
    assert {d for table in PROVIDED_BY.values() for d in table.values()} == first_party


def test_installed_first_party_names_resolve():
    for space, name in NAMES:
        distribution = expected_distribution(space, name)
        installed = any(i.distribution == distribution and i.status == "ok" for i in ember.plugins.list_plugins())
        if installed:
            namespace = ember.nn if space == "nn" else ember.nn.functional
            assert getattr(namespace, name) is registry.catalogue(
                "modules" if space == "nn" else "functionals")[name].obj
