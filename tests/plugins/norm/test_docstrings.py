"""The ``>>>`` examples in ember-norm's docstrings run and print what they show.

Tests for plugins/norm/src/ember_norm/*.py and ops/*.py docstrings.
"""

import doctest
import importlib

import pytest

MODULES = ["ember_norm.functional", "ember_norm.batchnorm", "ember_norm.instancenorm", "ember_norm.layernorm",
           "ember_norm.groupnorm", "ember_norm.rmsnorm", "ember_norm.lrn", "ember_norm.ops.batch_norm",
           "ember_norm.ops.layer_norm", "ember_norm.ops.rms_norm", "ember_norm.ops.group_norm"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    # Op docstrings live on the kernel function, which the Op keeps as .generic.
    module.__test__ = {f"{name}.{key}": value.generic for key, value in vars(module).items()
                       if getattr(value, "qualname", "").startswith("norm::")}
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
