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
from ember.plugins import forwarding as _forwarding

__all__ = ["Parameter", "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "DataParallel", "functional", "init", "parallel", "utils", "create"]


def create(name, **kwargs):
    """Build the module class registered as ``name``: ``ember.nn.create("Linear", in_features=4, ...)``."""
    return _forwarding.create(__name__, name, **kwargs)


__getattr__, __dir__ = _forwarding.forwarder(__name__)  # NOTE [ Forwarding modules ]
