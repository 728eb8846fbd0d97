"""docs/architecture.md is the repository's architecture page and is kept current: it is
in the index's toctree, the README points to it, and it names every hook of
hookspecs.py, every plugin and zoo distribution folder, and every family folder of
``ember.native``.

PyTorch counterpart: none (a drift guard for the docs).
"""

import pathlib

from ember.plugins import hookspecs

REPO = pathlib.Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"


def test_the_page_is_in_the_toctree_and_the_readme_points_to_it():
    assert "\narchitecture\n" in (REPO / "docs" / "index.md").read_text()
    readme = (REPO / "README.md").read_text()
    assert "docs/architecture.md" in readme
    assert "shared/ARCHITECTURE.md" not in readme, "the README points outside the repository"


def test_every_hook_is_named():
    text = PAGE.read_text()
    missing = [hook for hook in hookspecs.CATALOGUES if f"`{hook}`" not in text]
    assert not missing, f"docs/architecture.md does not name the hooks {missing}"


def test_every_distribution_folder_is_named():
    text = PAGE.read_text()
    folders = [f"{kind}/{path.name}/" for kind in ("plugins", "zoo")
               for path in sorted((REPO / kind).iterdir()) if (path / "pyproject.toml").is_file()]
    missing = [folder for folder in folders if folder not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_every_native_family_folder_is_named():
    text = PAGE.read_text()
    native = REPO / "core" / "src" / "ember" / "native"
    families = [path.name for path in sorted(native.iterdir()) if (path / "__init__.py").is_file()]
    missing = [name for name in families if f"`{name}/`" not in text]
    assert not missing, f"docs/architecture.md does not name the native folders {missing}"
