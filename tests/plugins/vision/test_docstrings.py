"""The ``>>>`` examples in ember_vision.ops' docstrings run and print what they claim."""

import doctest
import importlib

import pytest

import ember

MODULES = ["boxes", "focal_loss", "ps_roi_align", "ps_roi_pool", "roi_align", "roi_pool"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"ember_vision.ops.{name}")
    result = doctest.testmod(module, extraglobs={"ember": ember}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
