"""Tests for ember/plugins/hookspecs.py: one test per hook (named for it), and the
drift guards: every hook documented with its exact signature, every hook tested."""

import inspect
import pathlib
import re

import pluggy
import pytest
from plugin_helpers import make_plugin

import ember
from ember.device import Backend
from ember.plugins import hookspecs, registry

REPO = pathlib.Path(__file__).resolve().parents[3]
HOOKS = sorted(name for name, fn in vars(hookspecs).items()
               if name.startswith("ember_") and callable(fn))


# --- drift guards -------------------------------------------------------------------

def test_every_hook_has_a_catalogue():
    assert sorted(hookspecs.CATALOGUES) == HOOKS


def test_every_hook_is_documented_with_its_exact_signature():
    text = (REPO / "docs" / "plugins" / "hooks.md").read_text()
    documented = dict(re.findall(r"^## (ember_\w+)(\(.*\))$", text, flags=re.M))
    for hook in HOOKS:
        signature = str(inspect.signature(getattr(hookspecs, hook)))
        assert documented.get(hook) == signature, f"docs/plugins/hooks.md: {hook}{signature} not documented"
    assert sorted(documented) == HOOKS, "docs/plugins/hooks.md documents a hook that does not exist"


def test_every_hook_has_a_one_line_docstring():
    for hook in HOOKS:
        doc = getattr(hookspecs, hook).__doc__
        assert doc and "register" in doc and "\n" not in doc.strip(), hook


def test_every_hook_has_a_test_named_for_it():
    sources = "\n".join(p.read_text() for p in (REPO / "tests").rglob("test_*.py"))
    for hook in HOOKS:
        assert re.search(rf"^def test_{hook}\b", sources, flags=re.M), f"no test named test_{hook}"


# --- one test per hook --------------------------------------------------------------

def _owner(catalogue, key):
    return registry.catalogue(catalogue)[key].plugin


def test_ember_register_backends(use_plugin):
    import numpy as np

    backend = Backend("hooktestdev", np, to_host=lambda a: a, from_host=lambda a, index=None: np.asarray(a))
    use_plugin(make_plugin("hookspec_backends", ember_register_backends=lambda register: register(backend)))
    assert registry.find_backend("hooktestdev") is backend
    assert backend.plugin == "hookspec_backends" == _owner("backends", "hooktestdev")
    assert ember.ones(2, device="hooktestdev").device == ember.device("hooktestdev")


def test_ember_register_ops(use_plugin):
    from ember import library

    @library.custom_op("hookspec::twice", promote="default")
    def twice(xp, x):
        return x * 2

    use_plugin(make_plugin("hookspec_ops", ember_register_ops=lambda register: register(twice)))
    assert ember.ops.hookspec.twice is twice
    assert twice.plugin == "hookspec_ops" == _owner("ops", "hookspec::twice")
    assert ember.ops.hookspec.twice(ember.tensor([1, 2])).tolist() == [2, 4]


def test_ember_register_kernels(use_plugin):
    from ember import library

    @library.custom_op("hookspec::thrice", promote="default")
    def thrice(xp, x):
        return x * 3

    def cpu_thrice(fallback, xp, x):  # the integers here, the generic kernel for the rest
        return x + x + x if x.dtype.kind == "i" else fallback(xp, x)

    with pytest.warns(RuntimeWarning, match="'hookspec::thrice', which no plugin defines"):
        use_plugin(make_plugin("hookspec_kernels", ember_register_kernels=lambda register: register(
            cpu_thrice, name="hookspec::thrice", device="cpu", with_fallback=True)))
    entry = registry.catalogue("kernels")["hookspec::thrice[cpu]"]
    assert entry.obj is cpu_thrice and entry.plugin == "hookspec_kernels"
    assert entry.extra == {"op": "hookspec::thrice", "device": "cpu", "with_fallback": True}
    assert "cpu" not in thrice.kernels  # the op is nobody's yet: skipped (NOTE [ Kernels for another plugin's ops ])
    use_plugin(make_plugin("hookspec_kernels_op", ember_register_ops=lambda register: register(thrice)))
    installed = thrice.kernel_for("cpu")
    assert installed.__wrapped__ is cpu_thrice and installed.args == (thrice.generic,)
    assert thrice(ember.tensor([1, 2])).tolist() == [3, 6] and thrice(ember.tensor([0.5])).tolist() == [1.5]
    ember.plugins.unregister(name="hookspec_kernels")
    assert thrice.kernel_for("cpu") is thrice.generic  # the catalogues dropped, the op's own kernels back


def test_ember_register_tensor_types(use_plugin):
    from ember.serialization import quantized

    def rebuild(int_repr, dtype, scale, zero_point, axis):
        return ("rebuilt", dtype, scale, zero_point, axis)

    with registry.without("quantization"):
        use_plugin(make_plugin("hookspec_tensor_types",
                               ember_register_tensor_types=lambda register: register(rebuild, name="quantized")))
        assert registry.catalogue("tensor_types")["quantized"].obj is rebuild
        assert _owner("tensor_types", "quantized") == "hookspec_tensor_types"
        assert quantized._rebuild_quantized() is rebuild
        ember.plugins.unregister(name="hookspec_tensor_types")
        with pytest.raises(quantized.CheckpointError, match="needs the ember-quantization plugin"):
            quantized._rebuild_quantized()


def _check_class_catalogue(use_plugin, hook, catalogue):
    """Shared body of the tests of the hooks that register classes by name."""
    cls = type("HookSpecThing", (), {})
    use_plugin(make_plugin(f"hookspec_{catalogue}", **{hook: lambda register: register(cls)}))
    assert registry.catalogue(catalogue)["HookSpecThing"].obj is cls
    assert _owner(catalogue, "HookSpecThing") == f"hookspec_{catalogue}"
    # a second name for the same object is fine
    ember.plugins.unregister(name=f"hookspec_{catalogue}")
    use_plugin(make_plugin(f"hookspec_{catalogue}2",
                           **{hook: lambda register: register(cls, name="Alias")}))
    assert registry.catalogue(catalogue)["Alias"].obj is cls
    assert "HookSpecThing" not in registry.catalogue(catalogue)


def test_ember_register_modules(use_plugin):
    _check_class_catalogue(use_plugin, "ember_register_modules", "modules")


def test_ember_register_functionals(use_plugin):
    def hookspec_softsquare(x):
        return x * x

    use_plugin(make_plugin("hookspec_functionals",
                           ember_register_functionals=lambda register: register(hookspec_softsquare)))
    assert registry.catalogue("functionals")["hookspec_softsquare"].obj is hookspec_softsquare
    assert _owner("functionals", "hookspec_softsquare") == "hookspec_functionals"
    assert ember.nn.functional.hookspec_softsquare is hookspec_softsquare


def test_ember_register_optimizers(use_plugin):
    _check_class_catalogue(use_plugin, "ember_register_optimizers", "optimizers")


def test_ember_register_data(use_plugin):
    _check_class_catalogue(use_plugin, "ember_register_data", "data")


def test_ember_register_metrics(use_plugin):
    _check_class_catalogue(use_plugin, "ember_register_metrics", "metrics")
    import ember.metrics

    assert ember.metrics.Alias is registry.catalogue("metrics")["Alias"].obj  # reachable as ember.metrics.<Name>


def test_ember_register_models(use_plugin):
    def tiny_model(**overrides):
        return ("a model", overrides)

    use_plugin(make_plugin("hookspec_models", ember_register_models=lambda register: register(
        tiny_model, name="tiny", task="classification", input_size=(3, 8, 8))))
    entry = registry.catalogue("models")["tiny"]
    assert entry.obj is tiny_model
    assert entry.plugin == "hookspec_models"
    assert entry.extra == {"task": "classification", "input_size": (3, 8, 8)}


def test_a_hook_with_an_argument_the_spec_lacks_is_rejected():
    plugin = make_plugin("hookspec_bad", ember_register_ops=lambda register, extra: None)
    with pytest.raises(pluggy.PluginValidationError):
        ember.plugins.register(plugin)
    assert "hookspec_bad" not in [info.name for info in ember.plugins.list_plugins()]


def test_a_hook_may_take_none_of_the_spec_arguments(use_plugin):
    calls = []
    use_plugin(make_plugin("hookspec_noargs", ember_register_ops=lambda: calls.append(1)))
    assert calls == [1]
