"""The walkthrough walks: every excerpt is short enough to hold, fits the page, sits next
to prose that explains it, and every chapter ends with exercises whose solutions run.
A reading path and a topics page lead a reader into the chapters.

These rules are read off the chapter sources and the files they include, the way Sphinx
renders a ``literalinclude`` (``:pyobject:``, ``:start-at:``/``:start-after:``,
``:end-before:``/``:end-at:``, ``:dedent:``), so they need no Sphinx and fail fast.
"""

import ast
import pathlib
import re
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
CHAPTERS = sorted((DOCS / "chapters").glob("*.md"))

MAX_EXCERPT_LINES = 40
MAX_LINE = 88
MIN_PROSE_WORDS = 25  # beside every excerpt: a paragraph, not a caption

FENCE = re.compile(r"^(```+|:::+)\{?([\w-]*)\}?\s*(.*)$")


def _chapter_id(page):
    return page.name


def blocks(text):
    """Split a MyST page into ``("prose", lines)`` and ``(directive, lines)`` runs."""
    out, prose, lines = [], [], text.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            prose.append(lines[i])
            i += 1
            continue
        out.append(("prose", prose))
        prose = []
        fence, name, argument = match.group(1), match.group(2) or "code", match.group(3)
        body = []
        i += 1
        depth = 0
        while i < len(lines):
            inner = FENCE.match(lines[i])
            if lines[i].strip() == fence and depth == 0:
                break
            if inner and inner.group(1) == fence and inner.group(2):
                depth += 1
            elif lines[i].strip() == fence:
                depth -= 1
            body.append(lines[i])
            i += 1
        i += 1
        if name == "admonition":  # a counterpart box or an aside is prose
            out.append(("prose", body))
        else:
            out.append((name, [argument] + body))
    out.append(("prose", prose))
    return out


def prose_words(lines):
    words = 0
    for line in lines:
        if line.lstrip().startswith(("#", ":")):  # headings and directive options
            continue
        words += len(re.findall(r"[A-Za-z][\w'-]*", line))
    return words


def _options(body):
    options = {}
    for line in body[1:]:
        match = re.match(r":([\w-]+):\s*(.*)", line)
        if not match:
            break
        options[match.group(1)] = _unquote(match.group(2).strip())
    return options


def _unquote(value):
    """An option's value as MyST reads it (YAML): one layer of quotes removed."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _pyobject_lines(source, dotted):
    scope = ast.parse(source).body
    node = None
    for part in dotted.split("."):
        found = [n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == part]
        if not found:
            raise LookupError(dotted)
        node = found[0]
        scope = node.body
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return source.splitlines()[first - 1:node.end_lineno]


def excerpt(page, body):
    """The lines a ``literalinclude`` shows, as Sphinx would render them."""
    path = (page.parent / body[0].strip()).resolve()
    options = _options(body)
    source = path.read_text()
    lines = _pyobject_lines(source, options["pyobject"]) if "pyobject" in options else source.splitlines()
    for option, keep in (("start-at", True), ("start-after", False)):
        if option in options:
            at = next(i for i, line in enumerate(lines) if options[option] in line)
            lines = lines[at if keep else at + 1:]
    for option, keep in (("end-at", True), ("end-before", False)):
        if option in options:
            at = next(i for i, line in enumerate(lines) if options[option] in line)
            lines = lines[:at + 1 if keep else at]
    if "dedent" in options:
        lines = textwrap.dedent("\n".join(lines)).splitlines()
    return lines


def _is_note(shown):
    """A NOTE block (in comments or a docstring) is prose that lives in the source."""
    if shown and "NOTE [" in shown[0]:
        return True
    comments = sum(line.lstrip().startswith("#") for line in shown)
    return comments * 2 >= len(shown)


def includes(page):
    parts = blocks(page.read_text())
    for index, (kind, body) in enumerate(parts):
        if kind == "literalinclude":
            yield index, parts, excerpt(page, body)


@pytest.mark.parametrize("page", CHAPTERS, ids=_chapter_id)
def test_every_excerpt_is_short(page):
    long = [(index, len(shown)) for index, _, shown in includes(page) if len(shown) > MAX_EXCERPT_LINES]
    assert not long, f"{page.name}: excerpts over {MAX_EXCERPT_LINES} lines (block, lines): {long}"


@pytest.mark.parametrize("page", CHAPTERS, ids=_chapter_id)
def test_included_code_fits_the_page(page):
    wide = [line for _, _, shown in includes(page) for line in shown if len(line) > MAX_LINE]
    assert not wide, f"{page.name}: {len(wide)} included lines over {MAX_LINE} characters, e.g. {wide[0]!r}"


@pytest.mark.parametrize("page", CHAPTERS, ids=_chapter_id)
def test_no_doctest_directive_is_shown(page):
    shown = [line for _, _, lines in includes(page) for line in lines if "doctest:" in line]
    assert not shown, f"{page.name}: a doctest directive shows in included code: {shown[0]!r}"


@pytest.mark.parametrize("page", CHAPTERS, ids=_chapter_id)
def test_every_excerpt_is_explained_next_to_it(page):
    bare = []
    for index, parts, shown in includes(page):
        if _is_note(shown):
            continue
        before = parts[index - 1][1] if parts[index - 1][0] == "prose" else []
        after = parts[index + 1][1] if index + 1 < len(parts) and parts[index + 1][0] == "prose" else []
        if max(prose_words(before), prose_words(after)) < MIN_PROSE_WORDS:
            bare.append(parts[index][1][0].strip() + " " + str(_options(parts[index][1])))
    assert not bare, f"{page.name}: excerpts with no paragraph of prose beside them: {bare}"


@pytest.mark.parametrize("page", CHAPTERS, ids=_chapter_id)
def test_every_chapter_ends_with_exercises_that_run(page):
    text = page.read_text()
    sections = re.split(r"^## ", text, flags=re.M)
    last = sections[-1]
    assert last.startswith("Exercises"), f"{page.name}: the last section must be '## Exercises'"
    assert len(re.findall(r"^\d+\. ", last, flags=re.M)) >= 2, f"{page.name}: at least two numbered exercises"
    assert "```{doctest}" in last, f"{page.name}: the exercises' solutions run under the doctest builder"


def test_the_reading_path_opens_the_docs():
    index = (DOCS / "index.md").read_text()
    page = DOCS / "reading-path.md"
    assert page.is_file(), "docs/reading-path.md: the opening route through the chapters"
    assert index.index("reading-path") < index.index("chapters/01-tensor"), "the reading path comes first"
    text = page.read_text().lower()
    for concept in ("tensors", "autograd", "optimizers", "modules", "data"):
        assert concept in text, f"reading path: Bau's concept {concept!r} is missing"
    assert len(set(re.findall(r"chapters/(\d\d)-", text))) >= 5, "the path links the chapters it walks"


SEED_TOPICS = ("tensor", "storage", "autograd", "module", "optimizer", "scheduler", "data", "serialization",
               "unpickler", "norm", "transformer", "custom operator", "parallel", "pruning", "quantization",
               "distillation", "fx", "jit", "compile", "onnx")


def test_every_seed_topic_is_two_clicks_from_the_index():
    index = (DOCS / "index.md").read_text()
    page = DOCS / "topics.md"
    assert page.is_file() and "\ntopics\n" in index, "docs/topics.md is in the index's toctree"
    links = re.findall(r"\[([^\]]+)\]\((?:chapters/)?[\w/-]+\.md(?:#[\w-]+)?\)|\{doc\}`([^`]+)`", page.read_text())
    linked = " ".join(a + b for a, b in links).lower()
    missing = [topic for topic in SEED_TOPICS if topic not in linked]
    assert not missing, f"topics.md: no link for {missing}"


TAUGHT = {  # chapter -> headings a reader must find there (the parts that were only linked)
    "01": ("TensorImpl",),
    "02": ("dispatch key",),
    "04": ("_apply",),
    "06": ("InstanceNorm",),
    "07": ("scheduler", "SWA"),
    "09": ("_rebuild_tensor_v2", "map_location"),
}


@pytest.mark.parametrize("chapter", sorted(TAUGHT))
def test_the_parts_that_were_only_linked_are_taught(chapter):
    page = next(p for p in CHAPTERS if p.name.startswith(chapter))
    headings = "\n".join(re.findall(r"^#+ (.*)$", page.read_text(), flags=re.M)).lower()
    missing = [topic for topic in TAUGHT[chapter] if topic.lower() not in headings]
    assert not missing, f"{page.name}: no section on {missing}"
