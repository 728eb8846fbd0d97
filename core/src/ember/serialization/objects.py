"""Saving any picklable object in a checkpoint (a whole module, a NumPy array, a config
object), as ``torch.save`` does: objects outside the weights-only subset are written by
their ``__reduce_ex__(2)`` as ordinary pickle opcodes, tensors inside them as storages.

PyTorch counterpart: ``_save`` in torch/serialization.py, which hands every object to
Python's pickler (v2.13). Such a file loads only with ``ember.load(...,
weights_only=False)`` (trusted_load.py), as in PyTorch; the default weights-only load
refuses it with PyTorch's guidance.
"""

import copyreg
import importlib

_NEWOBJ, _REDUCE, _BUILD, _APPEND, _SETITEM = b"\x81", b"R", b"b", b"a", b"s"


def _global_name(obj):
    """``(module, qualname)`` under which ``obj`` (a class or function) can be imported back."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if module is None or name is None or "<" in name:
        raise TypeError(f"ember.save can't save {obj!r}: only importable classes and functions pickle by name")
    found = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    if found is not obj:
        raise TypeError(f"ember.save can't save {obj!r}: it is not {module}.{name}")
    return module, name


def save_object(pickler, obj):
    """Write ``obj`` with ``pickler`` (a ``CheckpointPickler``), by name or by its reduction."""
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__") and not hasattr(obj, "__self__"):
        pickler._global(*_global_name(obj))
        pickler._memoize(obj)
        return
    reduced = obj.__reduce_ex__(2)
    if isinstance(reduced, str):  # a module-level singleton, pickled by name
        pickler._global(obj.__module__, reduced)
        pickler._memoize(obj)
        return
    function, args, state, list_items, dict_items = (tuple(reduced) + (None,) * 5)[:5]
    if function is copyreg.__newobj__:
        pickler._save(args[0])
        pickler._save(tuple(args[1:]))
        pickler._out += _NEWOBJ
    else:
        pickler._save(function)
        pickler._save(tuple(args))
        pickler._out += _REDUCE
    pickler._memoize(obj)
    for item in list_items or ():
        pickler._save(item)
        pickler._out += _APPEND
    for key, value in dict_items or ():
        pickler._save(key)
        pickler._save(value)
        pickler._out += _SETITEM
    if state is not None:
        pickler._save(state)
        pickler._out += _BUILD
