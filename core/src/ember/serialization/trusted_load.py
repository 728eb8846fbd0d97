"""``ember.load(f, weights_only=False)``: the caller's explicit choice to trust a file,
which then unpickles any object, importing the classes and calling the functions it
names, as ``torch.load(weights_only=False)`` does.

PyTorch counterpart: the ``weights_only=False`` branch of ``load`` in
torch/serialization.py (v2.13). Only run it on files from a trusted source: unpickling
can execute arbitrary code. The names of torch's own rebuild functions and storage
types map to ember's, so tensors come back as ember tensors.
"""

import io
import pickle

from ember.serialization.errors import CheckpointError
from ember.serialization.unpickler import Refused, SafeCallable


def _adapter(entry):
    """A Python callable (REDUCE) or class (NEWOBJ) running a weights-only table entry."""
    if entry.is_class:
        return type(entry.name, (), {"__new__": staticmethod(lambda cls, *args: entry.function(*args))})
    return lambda *args: entry.function(*args)


class TrustingUnpickler(pickle.Unpickler):
    """Python's unpickler, with torch's names resolved through ember's table and
    storages read from the archive by ``persistent_load``."""

    def __init__(self, data, globals_table, persistent_load):
        super().__init__(io.BytesIO(data))
        self._table = globals_table
        self._persistent = persistent_load

    def find_class(self, module, name):
        entry = self._table.get((module, name))
        if entry is None:
            return super().find_class(module, name)
        if type(entry) is Refused:
            raise CheckpointError(entry.reason)
        return _adapter(entry) if isinstance(entry, SafeCallable) else entry

    def persistent_load(self, pid):
        return self._persistent(pid)


WEIGHTS_ONLY_GUIDANCE = (
    "Weights only load failed. This file can still be loaded, do so only if you trust the source of the "
    "checkpoint: re-running ember.load with weights_only=False will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source. ")
