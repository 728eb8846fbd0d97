"""The zoo and the trainer depend one way (NOTE [ The zoo and the trainer ] in
ember/trainer/__init__.py): the zoo never imports the trainer, the training loop imports
only its modes, and neither imports a plugin. Imports inside functions count."""

import ast
import pathlib

import pytest

import ember

ROOT = pathlib.Path(ember.__file__).parent


def imported(path):
    """Every module ``path`` imports, at the top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def trainer_modules(path):
    return {name.split(".")[2] for name in imported(path) if name.startswith("ember.trainer.")}


@pytest.mark.parametrize("path", sorted((ROOT / "zoo").glob("*.py")), ids=lambda p: p.name)
def test_the_zoo_never_imports_the_trainer_or_a_plugin(path):
    names = imported(path)
    assert not [n for n in names if n == "ember.trainer" or n.startswith("ember.trainer.")]
    assert not [n for n in names if n.startswith("ember_")]


@pytest.mark.parametrize("path", sorted((ROOT / "trainer").rglob("*.py")), ids=lambda p: p.name)
def test_the_trainer_imports_no_plugin(path):
    assert not [n for n in imported(path) if n.startswith("ember_")]


def test_the_loop_imports_only_its_modes_and_callbacks_and_they_import_no_other_trainer_module():
    modes = {"distillation", "qat", "validation_metrics"}
    assert trainer_modules(ROOT / "trainer" / "training.py") == {"callbacks"} | modes
    for mode in modes:
        assert trainer_modules(ROOT / "trainer" / f"{mode}.py") == set()
    for path in (ROOT / "trainer" / "callbacks").glob("*.py"):
        assert trainer_modules(path) <= {"callbacks"}, path.name
