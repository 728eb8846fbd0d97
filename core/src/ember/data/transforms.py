"""``ember.data.transforms``: forwards to the module the ember-data plugin registers as "transforms",
so ``from ember.data.transforms import ...`` works like ``ember.data.transforms.<name>``.

PyTorch counterpart: torchvision/transforms/__init__.py (v0.28).
"""


def _module():
    from ember.data import _lookup

    return _lookup("transforms")


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name.startswith("__"):
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
    return getattr(_module(), name)


def __dir__():
    return dir(_module())
