"""The source map: every PyTorch file named by a module docstring's "PyTorch counterpart:"
paragraph, the ember files that mirror it, and the chapters that read those files.

PyTorch counterpart: none (docs tooling; PyTorch has no map from its files to a mirror).

The parsing here is shared with tests/docs/test_counterparts.py (which checks that each
named file exists) and tests/docs/test_source_map.py (which checks the page is complete),
so the page, the drift test and the completeness test read the docstrings the same way.

- ``ember-source-map``: a table, one row per PyTorch file, and a second table of the ember
  files whose counterpart is "none", with the reason their docstring gives.
"""

import ast
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = REPO / "docs" / "chapters"
PATH = re.compile(r"\b((?:torch|torchvision|aten|c10|tools|caffe2|references)/[\w/.\-]*)")
NONE = re.compile(r"PyTorch counterpart: none\b[^.]*?[,;(:.]?\s*\S", re.I)
INCLUDE = re.compile(r"(?:\{literalinclude\}|literalinclude::)\s+(\S+)")


def source_files():
    """Every Python file of the core, the first-party plugins, the zoo and the examples."""
    roots = [REPO / "core" / "src"] + sorted((REPO / "plugins").glob("*/src"))
    roots += sorted((REPO / "zoo").glob("*/src")) + sorted((REPO / "examples").glob("*/src"))
    return sorted(p for root in roots for p in root.rglob("*.py"))


def counterpart_paragraph(path):
    """The docstring paragraph that starts at "PyTorch counterpart", or None."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    start = doc.find("PyTorch counterpart")
    return None if start < 0 else doc[start:].split("\n\n")[0]


def named_paths(paragraph):
    """The PyTorch paths a counterpart paragraph names, in order, without trailing punctuation."""
    return [p.rstrip(".,;:") for p in PATH.findall(paragraph)]


def chapter_readers():
    """``{repo-relative file: [chapter docname, ...]}`` from the chapters' literalincludes."""
    readers = {}
    for chapter in sorted(CHAPTERS.glob("*.md")):
        for target in INCLUDE.findall(chapter.read_text()):
            path = (chapter.parent / target).resolve()
            if REPO in path.parents:
                docs = readers.setdefault(path.relative_to(REPO).as_posix(), [])
                if chapter.stem not in docs:
                    docs.append(chapter.stem)
    return readers


def source_map():
    """``(rows, without)``: rows are ``(torch path, [ember files], [chapters])`` sorted by
    torch path; ``without`` lists ``(ember file, reason)`` for counterpart "none"."""
    readers = chapter_readers()
    mirrors, without = {}, []
    for path in source_files():
        name = path.relative_to(REPO).as_posix()
        paragraph = counterpart_paragraph(path)
        if paragraph is None:
            continue
        if NONE.match(paragraph):
            without.append((name, " ".join(paragraph.split())))
            continue
        for torch_path in dict.fromkeys(named_paths(paragraph)):
            mirrors.setdefault(torch_path, []).append(name)
    rows = []
    for torch_path in sorted(mirrors):
        files = mirrors[torch_path]
        chapters = sorted({c for f in files for c in readers.get(f, [])})
        rows.append((torch_path, files, chapters))
    return rows, without


def _list_table(header, rows, widths):
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [header] + rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return lines


def _literal(text):
    return f"``{text}``"


def _torch_link(path):
    return f":torchsrc:`{path}`" if path.startswith(("torch/", "aten/", "c10/", "tools/")) else _literal(path)


def _plain(text):
    """Docstring prose made safe in a table cell: roles become literals, stray markup is escaped."""
    text = re.sub(r":[\w:]+:`([^`]+)`", r"``\1``", text)
    text = text.replace("|", r"\|").replace("*", r"\*")
    return text.strip()


def source_map_rst():
    """The page's tables as reStructuredText lines."""
    rows, without = source_map()
    table = [[_torch_link(t), " ".join(_literal(f) for f in files),
              ", ".join(f":doc:`/chapters/{c}`" for c in chapters) or "(none)"]
             for t, files, chapters in rows]
    lines = _list_table(["PyTorch file", "ember file(s)", "chapter(s) reading them"], table, "30 45 25")
    lines += ["", f"{len(without)} ember files have no PyTorch counterpart; their docstrings say why:", ""]
    escaped = [[_literal(f), _plain(reason.removeprefix("PyTorch counterpart: none"))] for f, reason in without]
    lines += _list_table(["ember file", "why there is none"], escaped, "40 60")
    return lines


def setup(app):
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.nodes import nested_parse_with_titles

    class SourceMap(SphinxDirective):
        """The source map, parsed from the docstrings at build time."""

        def run(self):
            self.env.note_dependency(__file__)  # a change here re-reads the page
            for path in source_files():
                self.env.note_dependency(str(path))
            for chapter in CHAPTERS.glob("*.md"):
                self.env.note_dependency(str(chapter))
            container = nodes.container()
            nested_parse_with_titles(self.state, StringList(source_map_rst(), "<ember-source-map>"), container)
            return container.children

    app.add_directive("ember-source-map", SourceMap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
