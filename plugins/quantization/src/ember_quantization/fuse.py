"""fuse_modules: fold BatchNorm into the preceding conv and pair ReLU with its conv or linear.

PyTorch counterpart: torch/ao/quantization/fuse_modules.py, fuser_method_mappings.py and
torch/nn/utils/fusion.py (``fuse_conv_bn_eval``) (v2.13). ember fuses models in eval
mode only (torch's training-mode ``ConvBn2d`` QAT modules are not ported).
"""

import copy

import ember
from ember_quantization.nn.intrinsic import ConvReLU2d, LinearReLU


def fuse_conv_bn_eval(conv, bn):
    """A Conv2d computing ``bn(conv(x))`` (running statistics): scaled weight, shifted bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    with ember.no_grad():
        factor = bn.weight / ember.sqrt(bn.running_var + bn.eps)
        bias = conv.bias if conv.bias is not None else ember.zeros_like(bn.running_mean)
        fused.weight = ember.nn.Parameter(conv.weight * factor.reshape(-1, 1, 1, 1))
        fused.bias = ember.nn.Parameter((bias - bn.running_mean) * factor + bn.bias)
    return fused


def _fuse(modules):
    """The fused module for a list of float modules, by their types."""
    kinds = tuple(type(m).__name__ for m in modules)
    if kinds == ("Conv2d", "BatchNorm2d"):
        return fuse_conv_bn_eval(*modules)
    if kinds == ("Conv2d", "BatchNorm2d", "ReLU"):
        return ConvReLU2d(fuse_conv_bn_eval(modules[0], modules[1]), modules[2])
    if kinds == ("Conv2d", "ReLU"):
        return ConvReLU2d(*modules)
    if kinds == ("Linear", "ReLU"):
        return LinearReLU(*modules)
    raise NotImplementedError(f"Cannot fuse modules: {kinds}")


def _set(model, name, module):
    parent, _, leaf = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, leaf, module)


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    """Fuse each list of submodule names: the first becomes the fused module, the others Identity.

    >>> import ember
    >>> from ember_quantization import fuse_modules
    >>> m = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU()).eval()
    >>> type(fuse_modules(m, [["0", "1"]])[0]).__name__
    'LinearReLU'
    """
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple)) \
        else [modules_to_fuse]
    for names in groups:
        fused = _fuse([model.get_submodule(name) for name in names])
        _set(model, names[0], fused)
        for name in names[1:]:
            _set(model, name, ember.nn.Identity())
    return model


__all__ = ["fuse_modules", "fuse_conv_bn_eval"]
