"""The model catalogue: what each zoo model is, read from what plugins registered.

PyTorch counterpart: torchvision/models/_api.py (v0.28: ``register_model``,
``list_models``, ``get_model_builder``) and timm's ``_registry.py``. Models come from
plugins through the ``ember_register_models`` hook, never from import side effects, so a
listing never depends on which module someone happened to import (timm#1694).

A plugin registers a builder and what is known about it::

    @hookimpl
    def ember_register_models(register):
        register(resnet18, name="resnet18", task="classification", family="resnet",
                 input_size=(3, 224, 224), num_classes=1000, num_params=11_689_512,
                 torch_counterpart="torchvision.models.resnet18", paper="...")

Every keyword but ``name`` lands in a frozen ``ModelInfo`` (fields below; unknown
keywords are an error, so a typo never passes silently).
"""

import difflib
import fnmatch
import re
from dataclasses import dataclass, field, fields

from ember.zoo.errors import UnknownModelError


@dataclass(frozen=True)
class ModelInfo:
    """Everything the zoo knows about one registered model.

    ``task`` is the task's name (``"classification"``, ``"detection"``, ``"seq2seq"``,
    ``"language-model"``); the ``Task`` object that trains, evaluates and predicts for
    it is ``ember.zoo.get_task(name)``. ``measured`` lists what ember itself measured,
    each a dict such as ``{"metric": "accuracy", "value": 0.99,
    "data": "digits test split", "cpu_seconds": 12.0, "recipe": "10 epochs, SGD"}``.
    """

    name: str
    builder: object
    plugin: str
    task: str
    task_object: object = field(default=None, repr=False, compare=False)
    family: str = None
    description: str = None
    input_size: tuple = None
    num_classes: int = None
    num_params: int = None
    default_dataset: str = None
    # default training options: epochs, batch_size, lr, optimizer, ...
    recipe: dict = field(default_factory=dict)
    paper: str = None
    torch_counterpart: str = None
    weights: tuple = ()  # file names looked up in the weights cache (ember.zoo.weights)
    measured: tuple = ()

    def as_dict(self):
        """Plain data (for ``ember models --json``)."""
        skip = ("builder", "task_object")
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in skip}
        out["builder"] = f"{self.builder.__module__}.{self.builder.__qualname__}"
        return out


_INFO_FIELDS = {f.name for f in fields(ModelInfo)} - {"name", "builder", "plugin", "task_object"}


def _catalogue():
    from ember.plugins import registry

    return registry.catalogue("models")


def _info_from(name, entry):
    extra = dict(entry.extra)
    unknown = sorted(set(extra) - _INFO_FIELDS)
    if unknown:
        raise TypeError(f"model {name!r} (plugin {entry.plugin!r}) was registered with unknown "
                        f"keyword(s) {', '.join(unknown)}; known: {', '.join(sorted(_INFO_FIELDS))}")
    task = extra.pop("task", None)
    if task is None:
        raise TypeError(f"model {name!r} (plugin {entry.plugin!r}) was registered without a task")
    task_object = None
    if not isinstance(task, str):  # a Task instance: the family brings its own
        task_object, task = task, task.name
    for key in ("input_size", "weights", "measured"):
        if key in extra and extra[key] is not None:
            extra[key] = tuple(extra[key])
    return ModelInfo(name=name, builder=entry.obj, plugin=entry.plugin, task=task, task_object=task_object,
                     **extra)


def model_info(name):
    """The ``ModelInfo`` of the model registered as ``name``."""
    entry = _catalogue().get(name)
    if entry is None:
        raise UnknownModelError(_unknown_message(name))
    return _info_from(name, entry)


def list_models(pattern="*"):
    """Names of the registered models matching ``pattern`` (fnmatch: ``"resnet*"``), in
    natural order (resnet8 before resnet20)."""
    return sorted((name for name in _catalogue() if fnmatch.fnmatchcase(name, pattern)),
                  key=_natural_key)


def _natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _unknown_message(name):
    names = list_models()
    close = [n for n in names if name.lower() in n.lower() or n.lower() in name.lower()]
    # the closest spelling first: resnet8_cifar before se_resnet8_cifar for "resnet8"
    close = sorted(close, key=lambda n: -difflib.SequenceMatcher(None, name.lower(), n.lower()).ratio())[:8]
    if close:
        hint = f"; did you mean: {', '.join(close)}"
    elif names:
        hint = f"; registered: {', '.join(names[:20])}" + (" ..." if len(names) > 20 else "")
    else:
        from ember.plugins.manager import install_hint

        hint = f"; no model is registered (install a zoo distribution, e.g. {install_hint('ember-zoo-resnet')})"
    return f"no model named {name!r}{hint}"
