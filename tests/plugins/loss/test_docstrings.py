"""The ``>>>`` examples in ember_loss's docstrings run and print what they claim."""

import doctest
import importlib

import pytest

MODULES = ["binary", "cross_entropy", "embedding_losses", "kl_div", "likelihood", "nll", "regression"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"ember_loss.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
