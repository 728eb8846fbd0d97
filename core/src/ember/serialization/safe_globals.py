"""Allow-listing classes and functions for the weights-only loader:
``add_safe_globals``, the ``safe_globals`` context manager, ``get_safe_globals``,
``clear_safe_globals``.

PyTorch counterpart: ``add_safe_globals`` / ``safe_globals`` in torch/serialization.py
and their use in torch/_weights_only_unpickler.py (v2.13). An allow-listed class may be
named by the file, constructed (REDUCE calls it, NEWOBJ calls its ``__new__``) and
given its state (BUILD: its ``__setstate__``, else its ``__dict__`` is updated); an
allow-listed function may be called. Everything else stays refused.
"""

import contextlib

_ALLOWED = {}  # "module.qualname" -> the object


def _name_of(entry):
    if isinstance(entry, tuple):
        obj, name = entry
        return name, obj
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals):
    """Allow each object (or ``(object, "module.name")`` pair) in weights-only loads."""
    for entry in safe_globals:
        name, obj = _name_of(entry)
        _ALLOWED[name] = obj


def get_safe_globals():
    """The objects added with ``add_safe_globals``."""
    return list(_ALLOWED.values())


def clear_safe_globals():
    """Forget every object added with ``add_safe_globals``."""
    _ALLOWED.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Allow ``safe_globals`` inside a ``with`` block only."""
    saved = dict(_ALLOWED)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _ALLOWED.clear()
        _ALLOWED.update(saved)


def lookup(module, name):
    """The allowed object named ``module.name``, or None."""
    return _ALLOWED.get(f"{module}.{name}")


def is_allowed_instance(obj):
    """Whether ``obj`` is an instance of an allow-listed class (BUILD may set its state)."""
    return any(type(obj) is allowed for allowed in _ALLOWED.values() if isinstance(allowed, type))
