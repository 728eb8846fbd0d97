"""The core's module classes.

PyTorch counterpart: torch/nn/modules/__init__.py (v2.13). Layers that come in
families (norms, activations, losses) live in plugins and are reached through
``ember.nn.<Name>`` (see ember/nn/__init__.py).
"""

from ember.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.modules.module import Module

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
