"""Every public name of ember is in the API reference: the Tensor's methods, the ``ember.*``
names, and every module, functional, loss, optimizer, scheduler, dataset, transform and zoo
model a plugin registers.

The public names are listed here from the objects and the catalogues; the reference's
entries are read from docs/reference/api.rst (autodoc) and from the reStructuredText that
docs/_ext/api_catalogue.py writes for each ``ember-api`` directive of
docs/reference/public-api.rst, rendered here without Sphinx."""

import importlib
import inspect
import pathlib
import re
import sys

import pytest

import ember
import ember.optim
import ember.utils.data
from ember.plugins import registry

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import api_catalogue  # noqa: E402

REFERENCE = REPO / "docs" / "reference"
# Where each kind of registration is reachable; a new kind must be given a place here.
NAMESPACES = {
    ("modules", None): "ember.nn",
    ("functionals", None): "ember.nn.functional",
    ("optimizers", "optimizer"): "ember.optim",
    ("optimizers", "lr_scheduler"): "ember.optim.lr_scheduler",
    ("optimizers", "swa_utils"): "ember.optim.swa_utils",
    ("data", "api"): "ember.utils.data",
    ("data", "sampler"): "ember.utils.data",
}
BY_KEY = {("data", "dataset"): "dataset", ("models", None): "model"}


def public(obj):
    return [n for n in dir(obj) if not n.startswith("_") and n.isidentifier() and not inspect.ismodule(getattr(obj, n))]


def public_names():
    """``{qualified name: object}`` for attributes; ``{"dataset:digits": None, ...}`` for keys."""
    names = {f"ember.Tensor.{n}": getattr(ember.Tensor, n) for n in public(ember.Tensor)}
    names.update({f"ember.{n}": getattr(ember, n) for n in public(ember)})
    transforms = ember.utils.data.transforms
    names.update({f"ember.utils.data.transforms.{n}": getattr(transforms, n) for n in public(transforms)})
    for catalogue in ("modules", "functionals", "optimizers", "data", "models"):
        for name, reg in registry.catalogue(catalogue).items():
            where = (catalogue, reg.extra.get("kind"))
            if where in BY_KEY:
                names[f"{BY_KEY[where]}:{name}"] = None
                continue
            assert where in NAMESPACES, f"{catalogue} registers kind {where[1]!r}: give it a namespace and a group"
            space = importlib.import_module(NAMESPACES[where])
            if inspect.ismodule(getattr(space, name)):
                continue  # ember.utils.data.transforms and .datasets: their names are listed above
            names[f"{NAMESPACES[where]}.{name}"] = getattr(space, name)  # the core may shadow a plugin's
    for namespace in set(NAMESPACES.values()):  # and what the namespaces define themselves
        space = importlib.import_module(namespace)
        names.update({f"{namespace}.{n}": getattr(space, n) for n in public(space)})
    return names


def autodoc_objects():
    """The objects docs/reference/api.rst documents with autodoc."""
    found = []
    text = (REFERENCE / "api.rst").read_text()
    for kind, target, members in re.findall(r"^\.\. auto(\w+):: (\S+)\n(?:   :members:(.*)\n)?", text, re.M):
        module, _, attr = target.rpartition(".")
        obj = importlib.import_module(target) if kind == "module" else getattr(importlib.import_module(module), attr)
        if kind != "module":
            found.append(obj)
        for member in (members or "").replace(",", " ").split():
            found.append(getattr(obj, member))
    return found


def generated_entries():
    """Names the ``ember-api`` directives of public-api.rst declare, as Sphinx will see them."""
    page = (REFERENCE / "public-api.rst").read_text()
    rst = "\n".join(line for key in re.findall(r"^\.\. ember-api:: (\w+)", page, re.M)
                    for line in api_catalogue.group_rst(key))
    declared = set(re.findall(r"^\.\. py:\w+:: ([\w.]+)", rst, re.M))
    for key, label in (("datasets", "dataset"), ("models", "model")):
        if f".. ember-api:: {key}" in page:
            declared |= {f"{label}:{name}" for name in re.findall(r"^   \* - ``([^`]+)``", "\n".join(
                api_catalogue.group_rst(key)), re.M)}
    return declared


def undocumented():
    documented = generated_entries()
    by_identity = {id(obj) for obj in autodoc_objects()}
    return sorted(name for name, obj in public_names().items()
                  if name not in documented and (obj is None or id(obj) not in by_identity
                                                 or not (inspect.isfunction(obj) or inspect.isclass(obj))))


def test_the_page_is_linked():
    assert "reference/public-api" in (REPO / "docs" / "index.md").read_text()
    assert '"api_catalogue"' in (REPO / "docs" / "conf.py").read_text()


def test_the_catalogues_are_complete_enough_to_check():
    names = public_names()
    for name in ("ember.save", "ember.nn.Linear", "ember.optim.SGD", "ember.utils.data.DataLoader",
                 "ember.Tensor.add", "ember.optim.lr_scheduler.OneCycleLR", "ember.nn.functional.cross_entropy",
                 "ember.utils.data.transforms.Normalize", "model:resnet18", "dataset:digits"):
        assert name in names
    assert len(names) > 900


def test_every_public_name_is_documented():
    missing = undocumented()
    assert not missing, f"{len(missing)} public names are not in the API reference: {missing[:40]}"


@pytest.mark.parametrize("name", ["ember.nn.Linear", "ember.Tensor.view", "model:resnet18"])
def test_a_name_left_out_of_the_page_is_caught(name, monkeypatch):
    """The check can fail: drop a group's entry and the name is reported."""
    real = api_catalogue.group_rst

    def without(key):
        short = name.split(":")[-1].rsplit(".", 1)[-1]
        return [line for line in real(key) if not re.search(rf"(\.|``){re.escape(short)}(\(|``|$)", line)]

    monkeypatch.setattr(api_catalogue, "group_rst", without)
    assert name in undocumented()
