"""``ember.optim``: optimizers, found by name in the "optimizers" catalogue.

PyTorch counterpart: torch/optim/__init__.py (v2.13). The optimizers themselves live
in the ember-optim distribution (``ember_optim``); ``ember.optim.SGD`` looks the name
up in what plugins registered through ``ember_register_optimizers``, and, when the
plugin is not installed, says which distribution to install.
``ember.optim.lr_scheduler`` and ``ember.optim.swa_utils`` resolve their names the
same way.
"""

from ember.optim import lr_scheduler, swa_utils

__all__ = ["lr_scheduler", "swa_utils", "create"]


def create(name, params, **kwargs):
    """Build the optimizer registered as ``name``: ``ember.optim.create("AdamW", model.parameters(), lr=1e-3)``."""
    from ember.optim._registry import create as _create

    return _create("optimizer", name, params, **kwargs)


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ember.optim._registry import lookup

    return lookup("optimizer", name, __name__)


def __dir__():
    from ember.optim._registry import names

    return sorted(set(globals()) | set(names("optimizer")))
