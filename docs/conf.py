"""Sphinx configuration of ember's source walkthrough.

Build (docs/README.md): ``python -m tox -e docs``, which runs
``python -m sphinx -n -W --keep-going -b html docs docs/_build/html`` and the same with
``-b doctest``. Everything works offline: links to PyTorch's documentation resolve
through the inventory built below from ``_intersphinx/torch.txt``.
"""

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE / "_intersphinx"))

import make_inventory  # noqa: E402

from ember.plugins import hookspecs, registry  # noqa: E402

# Build every plugin catalogue once, before any page is read: the graph directives and
# the doctests then run against complete catalogues, and a plugin that fails to load
# shows its warning here rather than in the middle of a page.
for _catalogue in hookspecs.CATALOGUES.values():
    registry.catalogue(_catalogue)

project = "ember"
author = "the ember authors"
copyright = "2026, the ember authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.extlinks",
    "sphinx.ext.graphviz",
    "sphinx.ext.intersphinx",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "ember_docs",
    "source_map",
    "api_catalogue",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md", "_intersphinx"]
root_doc = "index"

html_theme = "furo"
html_title = "ember: PyTorch's design, read in small files"
pygments_style = "sphinx"

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Every reference must resolve (`-n`), and `-W` makes a miss an error.
nitpicky = True
nitpick_ignore = [
    # Python builtins named in ember's docstrings; no inventory for the standard library offline.
    ("py:class", "object"),
    # napoleon writes the "Raises:" entry of ember.load unqualified; the class is
    # documented in the API reference as ember.serialization.errors.CheckpointError.
    ("py:exc", "CheckpointError"),
]

autodoc_default_options = {}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"

# Docstring examples and chapter examples run under `-b doctest` with these flags;
# tests/docs/test_docstrings.py runs the docstrings with the same ones.
doctest_default_flags = __import__("doctest").ELLIPSIS | __import__("doctest").IGNORE_EXCEPTION_DETAIL \
    | __import__("doctest").DONT_ACCEPT_TRUE_FOR_1
doctest_test_doctest_blocks = "default"

# PyTorch's docs through a local inventory: no fetch in CI. EMBER_DOCS_ONLINE=1 adds
# the live inventory (for linkcheck runs by hand).
_torch_inv = make_inventory.write_inventory(HERE / "_intersphinx" / "torch.inv")
intersphinx_mapping = {
    "torch": ("https://docs.pytorch.org/docs/stable/",
              (str(_torch_inv), None) if os.environ.get("EMBER_DOCS_ONLINE") else (str(_torch_inv),)),
}
intersphinx_timeout = 5

# :torchsrc:`torch/nn/modules/module.py` links to the file at the release the parity
# tests use; tests/docs checks that each named file exists in the installed torch.
extlinks = {
    "torchsrc": ("https://github.com/pytorch/pytorch/blob/v2.13.0/%s", "%s"),
}

graphviz_output_format = "svg"
viewcode_line_numbers = True
