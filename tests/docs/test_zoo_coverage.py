"""Drift guard: every first-party zoo distribution whose models are registered is walked
through in docs/chapters/12-zoo.md, so a new family cannot land without its chapter."""

import inspect
import pathlib

import ember

REPO = pathlib.Path(__file__).resolve().parents[2]
CHAPTER = REPO / "docs" / "chapters" / "12-zoo.md"


def zoo_distributions():
    """``{"resnet", "yolo", ...}``: the folders under zoo/ that registered models come from."""
    found = set()
    for name in ember.zoo.list_models():
        builder = ember.zoo.model_info(name).builder
        module = inspect.getmodule(builder)
        path = pathlib.Path(inspect.getfile(module if module is not None else builder)).resolve()
        if (REPO / "zoo") in path.parents:
            found.add(path.relative_to(REPO / "zoo").parts[0])
    return found


def test_the_first_party_zoo_is_registered():
    assert {"resnet", "yolo", "transformer"} <= zoo_distributions()


def test_every_zoo_distribution_has_a_walkthrough():
    text = CHAPTER.read_text()
    for distribution in sorted(zoo_distributions()):
        assert f"../../zoo/{distribution}/src/" in text, f"12-zoo.md shows no code of zoo/{distribution}"
