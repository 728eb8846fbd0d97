"""``ember.zoo``: models by name, their facts and weights, and the tasks that train them.

PyTorch counterpart: torchvision/models/_api.py (v0.28: ``list_models``, ``get_model``)
and timm's ``create_model``. Models are registered by plugins through the
``ember_register_models`` hook (see ember/zoo/registry.py and docs/plugins/hooks.md);
how a model is trained, evaluated and asked for predictions is its ``Task``
(NOTE [ The task protocol ] in ember/zoo/tasks.py). The loop that calls the tasks, and
the commands around it, are in ember/trainer/, which imports the zoo and never the reverse.

    >>> ember.zoo.list_models("resnet*")                       # doctest: +SKIP
    >>> model = ember.zoo.create_model("resnet18", num_classes=10)   # doctest: +SKIP
    >>> ember.zoo.model_info("resnet18").num_params            # doctest: +SKIP
"""

from ember.zoo.factory import create_model
from ember.zoo.registry import ModelInfo, list_models, model_info
from ember.zoo.tasks import ClassificationTask, Task, task_for
from ember.zoo.weights import (  # (one name a line: a grep for plugin imports matches `import ember_...`)
    ember_home,
    weights_dir,
)


def get_task(name):
    """The ``Task`` object of the model registered as ``name``."""
    return task_for(model_info(name))


__all__ = ["list_models", "create_model", "model_info", "get_task", "ModelInfo", "Task", "ClassificationTask",
           "ember_home", "weights_dir"]
