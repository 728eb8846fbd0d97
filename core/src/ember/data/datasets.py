"""``ember.data.datasets``: every registered dataset's builder by name, and the rest of the
module the ember-data plugin registers as "datasets" (``from ember.data.datasets import ...``).

PyTorch counterpart: torchvision/datasets/__init__.py (v0.28).
"""


def _module():
    from ember.data import _lookup

    return _lookup("datasets")


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    """A registered dataset's builder by name (``shapes_detect`` for "shapes-detect"),
    else an attribute of ember_data.datasets (``Shapes``, ``load_dataset``, ...)."""
    if name.startswith("__"):
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
    module = _module()
    from ember.plugins import registry

    entry = registry.catalogue("data").get(name.replace("_", "-"))
    if entry is not None and entry.extra.get("kind") == "dataset":
        return entry.obj
    return getattr(module, name)


def __dir__():
    return dir(_module())
