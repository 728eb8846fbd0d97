"""Drift guards on docs/: excerpts are named, never numbered; every chapter relates
ember's files to PyTorch's and runs an example; the hook reference is in the docs.

The HTML and doctest builds themselves run in ``tox -e docs`` (.ci/run), where Sphinx
is installed; these checks need no Sphinx and fail faster."""

import ast
import pathlib
import re

import pytest

from ember.plugins import hookspecs

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*") if p.suffix in (".md", ".rst") and "_build" not in p.parts)
CHAPTERS = sorted((DOCS / "chapters").glob("*.md"))
# `:lines:` (and its cousins) pick lines by number: inserting a line above the excerpt
# silently shows other code. `:pyobject:` and text markers fail loudly instead.
NUMBERED = re.compile(r"^\s*:(lines|start-line|end-line|emphasize-lines):", re.M)
INCLUDE = re.compile(r"```\{literalinclude\} (\S+)\n((?::[\w-]+:.*\n)*)")


def includes(page):
    for target, options in INCLUDE.findall(page.read_text()):
        yield (page.parent / target).resolve(), dict(re.findall(r":([\w-]+):\s*(.*)", options))


def test_pages_exist():
    assert len(CHAPTERS) >= 14
    index = (DOCS / "index.md").read_text()
    assert all(f"chapters/{chapter.stem}" in index for chapter in CHAPTERS), "a chapter missing from the toctree"
    assert (DOCS / "plugins" / "hooks.md") in PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_excerpt_is_chosen_by_line_numbers(page):
    assert not NUMBERED.search(page.read_text()), f"{page}: use :pyobject: or :start-at:/:end-before:"


def _pyobject_exists(tree, dotted):
    scope = tree.body
    for part in dotted.split("."):
        found = [n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part]
        if not found:
            return False
        scope = found[0].body
    return True


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.name)
def test_every_include_names_an_existing_object_or_marker(page):
    seen = 0
    for path, options in includes(page):
        seen += 1
        assert path.is_file(), f"{page.name}: {path} does not exist"
        assert "pyobject" in options or "start-at" in options, f"{page.name}: {path} is included without a name"
        source = path.read_text()
        if "pyobject" in options:
            assert _pyobject_exists(ast.parse(source), options["pyobject"]), \
                f"{page.name}: no {options['pyobject']} in {path}"
        for marker in ("start-at", "end-before"):
            if marker in options:
                assert options[marker].strip("\"'") in source, f"{page.name}: marker {options[marker]} not in {path}"
    text = page.read_text()
    if "Work in progress" not in text:
        assert seen >= 3, f"{page.name}: a chapter reads ember's code through at least three excerpts"


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_a_counterpart_box_and_a_doctest(page):
    text = page.read_text()
    assert "```{admonition} Counterpart" in text, f"{page.name}: no counterpart box"
    assert "{torchsrc}`" in text or "torchvision/" in text, f"{page.name}: names no PyTorch file"
    assert "```{doctest}" in text, f"{page.name}: no runnable example"
    for block in re.findall(r"```\{doctest\}\n(.*?)```", text, flags=re.S):
        first = block.lstrip().splitlines()[0]
        assert first.startswith(">>> import"), f"{page.name}: a doctest block must import what it uses first"


def test_every_page_is_in_a_toctree():
    index = (DOCS / "index.md").read_text()
    for page in PAGES:
        name = page.relative_to(DOCS).with_suffix("").as_posix()
        if name not in ("index", "README"):
            assert re.search(rf"^{re.escape(name)}$", index, re.M), f"{name} is in no toctree of docs/index.md"


def test_every_hook_appears_in_the_plugins_chapter_reference():
    # The signatures themselves are checked by tests/core/plugins/test_hookspecs.py
    # against docs/plugins/hooks.md; the chapter links to that page.
    hooks = (DOCS / "plugins" / "hooks.md").read_text()
    for hook in hookspecs.CATALOGUES:
        assert f"## {hook}(" in hooks
    assert "{doc}`../plugins/hooks`" in (DOCS / "chapters" / "11-plugins.md").read_text()


def test_readme_names_the_docs_command():
    assert "python -m tox -e docs" in (REPO / "README.md").read_text()
