"""Drift guard: every module of the core and of the first-party plugins names its
PyTorch counterpart (or says why there is none), and each PyTorch file it names exists.

Python files (``torch/...py``) and folders are checked against the installed torch
package. C++ sources, YAML files and torchvision files are not in the torch wheel; they
are checked against tests/docs/pytorch_source_paths.txt, a list kept by hand (each entry
is a path in PyTorch's repository at v2.13.0, or torchvision's at v0.28)."""

import pathlib
import re
import sys

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
TORCH_ROOT = pathlib.Path(torch.__file__).resolve().parent.parent
KEPT_PATHS = REPO / "tests" / "docs" / "pytorch_source_paths.txt"
# The docstring parsing is shared with the source map page (docs/_ext/source_map.py).
sys.path.insert(0, str(REPO / "docs" / "_ext"))
from source_map import NONE, counterpart_paragraph, named_paths, source_files  # noqa: E402


def kept_paths():
    lines = (line.split("  #", 1)[0].strip() for line in KEPT_PATHS.read_text().splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def is_checked_against_torch(path):
    """Python files and folders of the torch package (not its C++ sources)."""
    return path.startswith("torch/") and not path.startswith("torch/csrc/") and (
        path.endswith(".py") or path.endswith("/") or "." not in path.rsplit("/", 1)[-1])


FILES = source_files()


def test_the_walk_finds_core_and_plugins():
    names = {p.relative_to(REPO).as_posix() for p in FILES}
    assert "core/src/ember/tensor.py" in names
    assert "plugins/norm/src/ember_norm/batchnorm.py" in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_module_names_its_pytorch_counterpart(path):
    paragraph = counterpart_paragraph(path)
    assert paragraph is not None, f"{path}: the module docstring has no 'PyTorch counterpart:' line"
    if NONE.match(paragraph):
        assert len(paragraph) > len("PyTorch counterpart: none.") + 10, f"{path}: say why there is none"
        return
    paths = named_paths(paragraph)
    assert paths, f"{path}: the counterpart paragraph names no PyTorch file: {paragraph!r}"
    kept = kept_paths()
    for name in paths:
        if is_checked_against_torch(name):
            assert (TORCH_ROOT / name).exists(), f"{path}: {name} is not in the installed torch"
        else:
            assert name in kept, f"{path}: {name} is neither in torch's package nor in {KEPT_PATHS.name}"


def test_kept_paths_are_used_and_not_python_files_of_torch():
    used = {name for path in FILES for name in named_paths(counterpart_paragraph(path) or "")}
    for name in kept_paths():
        assert not is_checked_against_torch(name), f"{name} is in the torch package: check it there instead"
        assert name in used or name in docs_torchsrc_paths(), f"{KEPT_PATHS.name}: {name} is named nowhere"


def docs_torchsrc_paths():
    text = "\n".join(p.read_text() for p in (REPO / "docs").rglob("*.md"))
    return set(re.findall(r"\{torchsrc\}`([^`]+)`", text))


def test_docs_torchsrc_links_name_real_files():
    paths = docs_torchsrc_paths()
    assert len(paths) > 20
    kept = kept_paths()
    for name in paths:
        if is_checked_against_torch(name):
            assert (TORCH_ROOT / name).exists(), f"docs: {name} is not in the installed torch"
        else:
            assert name in kept, f"docs: {name} is neither in torch's package nor in {KEPT_PATHS.name}"


def test_kept_headers_ship_with_torch():
    """The wheel ships the C++ headers (torch/include): a header in the list must be there."""
    include = TORCH_ROOT / "torch" / "include"
    lines = [line for line in KEPT_PATHS.read_text().splitlines() if "  #" not in line]  # annotated: not installed
    headers = [line.strip() for line in lines if line.strip().endswith(".h")]
    assert len(headers) > 5
    for name in headers:
        assert (include / name.removeprefix("aten/src/")).exists(), f"{name} is not in torch/include"
