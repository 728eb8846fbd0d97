"""``ember.nn``: modules, parameters, initialisation and the module registry.

PyTorch counterpart: torch/nn/__init__.py (v2.13). The core's own classes are
imported here; every other ``ember.nn.<Name>`` (BatchNorm2d from ember-norm, ReLU
from ember-activation, ...) is looked up in the "modules" catalogue that plugins
fill through ``ember_register_modules``.
"""

from ember.nn import functional, init, parallel, utils
from ember.nn.modules import Module, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.parallel import DataParallel
from ember.nn.parameter import Parameter

__all__ = ["Parameter", "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "DataParallel", "functional", "init", "parallel", "utils", "create"]


def create(name, **kwargs):
    """Build the module class registered as ``name``: ``ember.nn.create("Linear", in_features=4, ...)``."""
    from ember.nn._registry import lookup

    try:
        cls = lookup("modules", name, __name__)
    except AttributeError as exc:
        raise KeyError(str(exc)) from None
    return cls(**kwargs)


def __getattr__(name):
    if name.startswith("__"):  # dunder probes (hasattr(m, "__wrapped__"), copy, pickle) never reach the registry
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ember.nn._registry import lookup

    return lookup("modules", name, __name__)


def __dir__():
    from ember.nn._registry import names

    return sorted(set(globals()) | set(names("modules")))
