"""``ember.ops``: every registered operator by namespace, as ``ember.ops.aten.mul``.

PyTorch counterpart: torch/_ops.py (``torch.ops``, ``_OpNamespace``) (v2.13). ember
leaves out overload packets (``torch.ops.aten.add.Tensor``): an ember op has one schema.

The namespaces read the ``ops`` catalogue that plugins fill (the core registers
``aten``), so ``ember.ops.myns.myop`` works for any installed operator plugin. A lookup
is two dict reads; no hook runs (NOTE [ Plugins stay off the hot path ]).
"""


def _ops_catalogue():
    from ember.plugins import registry

    return registry.catalogue("ops")


class _OpNamespace:
    """``ember.ops.<namespace>``: attribute access gives the op ``namespace::name``."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        found = _ops_catalogue().get(f"{self._name}::{op_name}")
        if found is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op_name}'")
        return found.obj

    def __dir__(self):
        prefix = self._name + "::"
        return sorted(k[len(prefix):] for k in _ops_catalogue() if k.startswith(prefix))

    def __iter__(self):
        return iter(self.__dir__())

    def __repr__(self):
        return f"<ember.ops namespace {self._name!r}>"


class _Ops:
    """The ``ember.ops`` object: attribute access gives a namespace."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpNamespace(name)

    def __dir__(self):
        return sorted({k.split("::")[0] for k in _ops_catalogue()})

    def __repr__(self):
        return "<ember.ops>"


ops = _Ops()
