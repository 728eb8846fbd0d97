"""Tests for ember/plugins/lookup.py ``plugin_module``: the core reaches a plugin's own API
through the registry, and a missing or broken plugin is named with how to install it."""

import ember_quantization
import pytest

from ember.plugins import PluginInfo, registry
from ember.plugins.lookup import plugin_module


def test_the_loaded_plugin_module_is_the_one_python_imported():
    assert plugin_module("ember-quantization") is ember_quantization


def test_a_missing_distribution_is_named_with_its_install_command():
    with pytest.raises(ImportError, match="ember-nothing, which is not installed; pip install ember-nothing"):
        plugin_module("ember-nothing")


def test_a_broken_plugin_is_named_with_its_error(monkeypatch):
    registry.plugin_infos()  # discovery first, so the fake record is not overwritten
    info = PluginInfo("fake", "ember-fake", "0.1", status="broken", error="ImportError: no module named x")
    monkeypatch.setitem(registry.infos, "fake", info)
    with pytest.raises(ImportError, match="ember-fake, which is broken: ImportError: no module named x"):
        plugin_module("ember-fake")
