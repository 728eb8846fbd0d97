"""Every ``NOTE [ Title ]`` that a source file points to exists: some file defines it as
a block (``# NOTE [ Title ]`` at the start of a comment or docstring line). A NOTE that is
renamed or removed leaves its references pointing nowhere; this finds them.

PyTorch counterpart: none (a drift guard for the house style's named NOTE blocks).
"""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCES = [path for pattern in ("core/src/**/*.py", "plugins/*/src/**/*.py", "plugins/*/setup.py",
                                "zoo/*/src/**/*.py") for path in sorted(REPO.glob(pattern))]

DEFINITION = re.compile(r"^\s*(?:#\s*)?NOTE \[ (.+?) \]", re.M)
REFERENCE = re.compile(r"NOTE \[ (.+?) \]")


def _joined(text):
    """The text with each line break (and a comment's leading ``#``) read as one space,
    so a reference wrapped over two lines is found whole."""
    return re.sub(r" {2,}", " ", re.sub(r"\s*\n\s*(?:#\s*)?", " ", text))


def test_every_note_that_is_named_is_defined():
    texts = {path: path.read_text() for path in SOURCES}
    defined = {title for text in texts.values() for title in DEFINITION.findall(text)}
    dangling = sorted({(str(path.relative_to(REPO)), title) for path, text in texts.items()
                       for title in REFERENCE.findall(_joined(text))
                       if title not in defined
                       and not (title.endswith(" ...") and any(d.startswith(title[:-4]) for d in defined))})
    assert not dangling, f"NOTEs named but defined nowhere (file, title): {dangling}"
