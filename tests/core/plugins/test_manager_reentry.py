"""A hook that looks a catalogue entry up while the catalogues are being built fails
alone, with a clear error, instead of rebuilding them recursively (which used to end in
a RecursionError that could break every plugin)."""

import types

import pytest

import ember
from ember.plugins import hookimpl, registry


def test_lookup_inside_a_hook_breaks_only_that_plugin():
    def ember_register_data(register):
        register(ember.nn.Linear, name="LinearLookedUpTooEarly")  # a catalogue lookup during the build

    plugin = types.ModuleType("early_lookup_plugin")
    plugin.ember_register_data = hookimpl(ember_register_data)
    ember.plugins.register(plugin, name="early-lookup")  # catalogues are built already: this works
    try:
        registry.invalidate()
        with pytest.warns(RuntimeWarning, match="looked up a catalogue entry while the catalogues were being built"):
            modules = registry.catalogue("modules")
        assert "Linear" in modules and registry.infos["early-lookup"].status == "broken"
        assert registry.infos["ember"].status == "ok" and registry.infos["numpy"].status == "ok"
        assert ember.ones(2).tolist() == [1.0, 1.0]
    finally:
        ember.plugins.unregister(name="early-lookup")
