"""The ``>>>`` examples in ember-data's docstrings run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import ember_data

MODULES = [info.name for info in pkgutil.walk_packages(ember_data.__path__, "ember_data.")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_examples_exist():
    found = sum(doctest.testmod(importlib.import_module(n), report=False).attempted for n in MODULES)
    assert found >= 6
