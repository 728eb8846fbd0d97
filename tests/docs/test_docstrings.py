"""Every ``>>>`` example in the docstrings of the core package runs and prints what it
says, in its own module's namespace (``pytest --doctest-modules`` semantics).

The Sphinx doctest builder (``tox -e docs``) runs the same examples again, with the
page's globals instead of the module's: an example that does not import what it uses
fails there. So here each docstring runs from an empty namespace, and a second test
requires that every example imports ``ember`` before it uses it."""

import doctest
import importlib
import pathlib
import pkgutil
import re

import pytest

import ember

CORE = pathlib.Path(ember.__file__).parent
# The flags Sphinx's doctest builder uses by default, so both runs agree.
FLAGS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1


def core_modules():
    names = ["ember"]
    for info in pkgutil.walk_packages([str(CORE)], prefix="ember."):
        if not info.name.rsplit(".", 1)[-1].startswith("__"):
            names.append(info.name)
    return sorted(names)


def examples(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, module_name, globs={}) if t.examples
            and getattr(t, "filename", None) == getattr(module, "__file__", None)]


MODULES = core_modules()


def test_the_walk_finds_the_core_modules():
    assert {"ember.tensor", "ember.dispatcher", "ember.autograd.engine", "ember.nn.modules.module"} <= set(MODULES)
    assert sum(len(examples(name)) for name in MODULES) >= 50


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures = []
    for test in examples(module_name):
        # Each docstring starts from an empty namespace: it must import what it uses.
        test.globs = {"__name__": module_name}
        runner.run(test, out=lambda text: failures.append(text))
    assert runner.failures == 0, "".join(failures)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_import_ember_first(module_name):
    for test in examples(module_name):
        # Skipped examples never run, here or in Sphinx.
        sources = [example.source for example in test.examples if not example.options.get(doctest.SKIP)]
        uses = next((i for i, s in enumerate(sources) if re.search(r"\bember\.", s)), None)
        binds_ember = re.compile(r"^(import .*\bember\b|from ember\b)", re.M)
        imports = next((i for i, s in enumerate(sources) if binds_ember.search(s)), None)
        if uses is not None:
            assert imports is not None and imports <= uses, f"{test.name}: the example uses ember before importing it"
