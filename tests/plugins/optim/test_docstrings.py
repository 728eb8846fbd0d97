"""The ``>>>`` examples in ember-optim's docstrings (and in the core's addcmul/addcdiv)
run and print what they show."""

import doctest
import importlib

import pytest

MODULES = ["ember_optim.sgd", "ember_optim.adam", "ember_optim.adamw", "ember_optim.rmsprop", "ember_optim.adagrad",
           "ember_optim.adadelta", "ember_optim.adamax", "ember_optim.nadam", "ember_optim.radam",
           "ember_optim.lr_scheduler.step_lr", "ember_optim.lr_scheduler.lambda_lr", "ember_optim.lr_scheduler.cyclic",
           "ember_optim.swa_utils", "ember.native.pointwise.ternary"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
