"""Embedded datasets (no network) and readers for data on disk.

PyTorch counterpart: torchvision/datasets/__init__.py (v0.28), in spirit: ember ships
small datasets inside the package, each deterministic from a seed and sized so a
2-core CPU trains on it in minutes.

=================  ==========================================================  ===============
name               what                                                        task
=================  ==========================================================  ===============
``digits``         UCI 8x8 handwritten digits, 1,797 images (CC BY 4.0)         classification
``shapes``         Pillow-drawn circle / square / triangle on noise             classification
``shapes-detect``  1-4 shapes per image, boxes and labels                       detection
``copy``           copy a digit sequence                                        seq2seq
``reverse``        reverse it                                                   seq2seq
``sort``           sort it                                                      seq2seq
``add``            add two numbers, digits of the sum reversed                  seq2seq
``pydoc-text``     Python's ``pydoc_data.topics``, character level              language model
=================  ==========================================================  ===============

``load_dataset(name, split="train", seed=0, **options)`` builds one;
``ember.data.datasets.<name>`` (hyphens as underscores) is its builder (here,
``ember_data.datasets.digits`` is the module of that name). Third-party datasets
registered with ``register(builder, name=..., kind="dataset")`` in the
``ember_register_data`` hook are found the same way.
"""

from ember_data.datasets.digits import Digits
from ember_data.datasets.idx import read_idx
from ember_data.datasets.pydoc_text import PydocText
from ember_data.datasets.sequences import SequenceTask
from ember_data.datasets.shapes import Shapes, ShapesDetect


def _sequence_builder(task):
    def build(split="train", seed=0, **options):
        return SequenceTask(task, split=split, seed=seed, **options)
    build.__name__ = task
    build.__doc__ = f"The ``{task}`` sequence task (see ``SequenceTask``)."
    return build


# name -> (builder(split=, seed=, **options), info registered with it)
EMBEDDED = {
    "digits": (Digits, {"task": "classification", "description": "UCI 8x8 handwritten digits, 10 classes"}),
    "shapes": (Shapes, {"task": "classification", "description": "circles, squares, triangles on noise"}),
    "shapes-detect": (ShapesDetect, {"task": "detection", "description": "1-4 shapes per image with boxes"}),
    "copy": (_sequence_builder("copy"), {"task": "seq2seq", "description": "copy a digit sequence"}),
    "reverse": (_sequence_builder("reverse"), {"task": "seq2seq", "description": "reverse a digit sequence"}),
    "sort": (_sequence_builder("sort"), {"task": "seq2seq", "description": "sort a digit sequence"}),
    "add": (_sequence_builder("add"), {"task": "seq2seq", "description": "add two numbers (sum reversed)"}),
    "pydoc-text": (PydocText, {"task": "language-model", "description": "pydoc_data.topics, characters"}),
}


def _datasets():
    """{name: Registration} of every dataset in the "data" catalogue (embedded and third-party)."""
    from ember.plugins import registry

    return {name: entry for name, entry in registry.catalogue("data").items()
            if entry.extra.get("kind") == "dataset"}


def list_datasets():
    """``[(name, task, description)]`` of every registered dataset, sorted by name."""
    return [(name, entry.extra.get("task"), entry.extra.get("description"))
            for name, entry in sorted(_datasets().items())]


def load_dataset(name, split="train", seed=0, **options):
    """Build the dataset registered as ``name``: ``load_dataset("shapes", split="test", seed=1)``."""
    entry = _datasets().get(name)
    if entry is None:
        raise KeyError(f"no dataset named {name!r}; registered: {', '.join(sorted(_datasets()))}")
    return entry.obj(split=split, seed=seed, **options)


__all__ = ["Digits", "Shapes", "ShapesDetect", "SequenceTask", "PydocText", "read_idx", "load_dataset",
           "list_datasets", "EMBEDDED"]
