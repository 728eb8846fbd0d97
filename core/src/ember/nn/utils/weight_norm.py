"""``ember.nn.utils.weight_norm``: weight normalisation the pre-parametrization way, a
forward pre-hook that recomputes ``weight`` from ``weight_g`` and ``weight_v`` before
every call; deprecated in torch for ``parametrizations.weight_norm`` (which warns the same).

PyTorch counterpart: torch/nn/utils/weight_norm.py (``WeightNorm``, ``weight_norm``,
``remove_weight_norm``) (v2.13).
"""

import warnings

from ember.nn.parameter import Parameter
from ember.nn.utils.parametrizations import norm_except_dim

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook: ``module.<name> = g * v / ||v||`` before each forward."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`ember.nn.utils.weight_norm` is deprecated in favor of "
                      "`ember.nn.utils.parametrizations.weight_norm`, as in torch.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` parameters (deprecated:
    use ``parametrizations.weight_norm``). Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Make ``module.<name>`` one parameter again. Returns ``module``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
