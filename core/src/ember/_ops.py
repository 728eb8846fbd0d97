"""``ember.ops``: every registered operator by namespace, as ``ember.ops.aten.mul``.

PyTorch counterpart: torch/_ops.py (``torch.ops``, ``_OpNamespace``) (v2.13).

The namespaces read the ``ops`` catalogue that plugins fill (the core registers
``aten``), so ``ember.ops.myns.myop`` works for any installed operator plugin.
"""


class _OpNamespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        from ember.plugins import registry

        found = registry.catalogue("ops").get(f"{self._name}::{op_name}")
        if found is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op_name}'")
        return found[0]

    def __dir__(self):
        from ember.plugins import registry

        prefix = self._name + "::"
        return sorted(k[len(prefix):] for k in registry.catalogue("ops") if k.startswith(prefix))

    def __repr__(self):
        return f"<ember.ops namespace {self._name!r}>"


class _Ops:
    """The ``ember.ops`` object: attribute access gives a namespace."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpNamespace(name)

    def __dir__(self):
        from ember.plugins import registry

        return sorted({k.split("::")[0] for k in registry.catalogue("ops")})


ops = _Ops()
