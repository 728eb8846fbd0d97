"""The ``>>>`` examples in deform_conv2d's docstrings run and print what they show (the
op's own example lives on its kernel function, the Op's ``.generic``).

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d.py and deform_conv2d_kernel.py
docstrings (PyTorch counterpart: torchvision/ops/deform_conv.py, torchvision 0.28).
"""

import doctest
import importlib

import pytest

MODULES = ["ember_vision.ops.deform_conv2d", "ember_vision.ops.deform_conv2d_kernel"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    module.__test__ = {f"{name}.{key}": value.generic for key, value in vars(module).items()
                       if getattr(value, "qualname", "").startswith("torchvision::")
                       and value.generic.__module__ == name}
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
