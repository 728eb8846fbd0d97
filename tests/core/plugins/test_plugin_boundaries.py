"""The boundaries between the distributions: the core imports no plugin, and ember-numba
imports no other plugin's modules; plugins reach each other only through the registry
(ops by name, ``ember_register_kernels``; the quantized tensor's checkpoint rebuild,
``ember_register_tensor_types``).

Tests for the layering that ember/plugins/manager.py (NOTE [ Kernels for another
plugin's ops ]) and ember/serialization/quantized.py rely on (PyTorch counterpart: none;
torch's own packages may import each other, its out-of-tree backends register through
torch.library).
"""

import ast
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[3]
CORE = REPO / "core" / "src" / "ember"
NUMBA = REPO / "plugins" / "numba" / "src" / "ember_numba"


def imported_modules(path):
    """``(line, module)`` for every import in the file, at any depth (inside functions too),
    and every ``importlib.import_module("...")`` of a literal name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == \
                "import_module" and node.args and isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, node.args[0].value))
    return found


def plugin_imports(package, allowed):
    """``["file:line module"]`` for each import of an ``ember_*`` package not in ``allowed``."""
    offending = []
    for path in sorted(package.rglob("*.py")):
        for line, module in imported_modules(path):
            top = str(module).partition(".")[0]
            if top.startswith("ember_") and top not in allowed:
                offending.append(f"{path.relative_to(package.parent)}:{line} {module}")
    return offending


def test_the_walk_finds_imports_inside_functions(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text("import ember\n\ndef f():\n    from ember_norm.ops import layer_norm\n"
                      "    import importlib\n    return importlib.import_module('ember_loss.nll')\n")
    found = plugin_imports(tmp_path, allowed=set())
    assert [entry.rpartition("/")[2] for entry in found] == ["sample.py:4 ember_norm.ops", "sample.py:6 ember_loss.nll"]


def test_core_imports_no_plugin():
    assert plugin_imports(CORE, allowed=set()) == []


def test_ember_numba_imports_only_itself_and_the_core():
    assert plugin_imports(NUMBA, allowed={"ember_numba"}) == []
