"""Fixtures shared by the core tests (tests/core/nn and tests/core/plugins register
throwaway plugins).

PyTorch counterpart: none (test fixtures).
"""

import pytest

import ember


@pytest.fixture
def use_plugin():
    """Register plugins for one test; unregister them afterwards."""
    names = []

    def use(plugin):
        names.append(ember.plugins.register(plugin))
        return plugin

    yield use
    for name in reversed(names):
        ember.plugins.unregister(name=name)
