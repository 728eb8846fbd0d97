"""Eager-mode workflows: ``prepare`` / ``convert`` (static), ``quantize_dynamic``, ``prepare_qat``.

PyTorch counterpart: torch/ao/quantization/quantize.py and quantization_mappings.py (v2.13).

# NOTE [ Eager-mode quantization in three passes ]
1. ``prepare`` hands each module its ``qconfig`` (inherited from the parent) and gives
   every module that will be quantized an observer, ``activation_post_process``, called
   by a forward hook on the module's output; the user then runs calibration data.
2. ``convert`` swaps each observed float module for its quantized twin through the
   mapping below (``from_float`` reads the observers' scale and zero point and quantizes
   the weight); observers and hooks disappear with the float modules.
3. ``QuantStub``/``DeQuantStub`` mark where tensors enter and leave the quantized region.
``quantize_dynamic`` skips calibration: weights are quantized now, activations per call.
``prepare_qat`` first swaps Linear/Conv2d for their QAT versions (fake-quantized weights),
then prepares with ``FakeQuantize`` as the activation observer.
"""

import copy

import ember
from ember_quantization import stubs
from ember_quantization.nn import intrinsic, qat
from ember_quantization.nn import quantized as nnq
from ember_quantization.nn.quantized import dynamic as nnqd


def static_quant_module_mappings():
    return {ember.nn.Linear: nnq.Linear, ember.nn.Conv2d: nnq.Conv2d, ember.nn.ReLU: nnq.ReLU,
            intrinsic.LinearReLU: nnq.Linear, intrinsic.ConvReLU2d: nnq.Conv2d, qat.Linear: nnq.Linear,
            qat.Conv2d: nnq.Conv2d, stubs.QuantStub: nnq.Quantize, stubs.DeQuantStub: nnq.DeQuantize,
            stubs.FloatFunctional: nnq.QFunctional}


def qat_module_mappings():
    return {ember.nn.Linear: qat.Linear, ember.nn.Conv2d: qat.Conv2d}


def dynamic_quant_module_mappings():
    return {ember.nn.Linear: nnqd.Linear}


# Modules that are quantized without observing their own output.
_NO_OBSERVER = (stubs.DeQuantStub, ember.nn.ReLU)


def propagate_qconfig_(module, qconfig_dict=None, parent_qconfig=None):
    """Give every submodule a ``qconfig``: its own, one from ``qconfig_dict`` (by type or name), or its parent's."""
    _propagate(module, qconfig_dict or {}, parent_qconfig, "")


def _propagate(module, qconfig_dict, parent_qconfig, prefix):
    # torch's precedence: the module's own qconfig, then its name, then its type, then the parent's
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = module.__dict__.get("qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, f"{prefix}.{name}" if prefix else name)


def _observer_forward_hook(module, inputs, output):
    return module.activation_post_process(output)


def _add_observers(module, mapping):
    for child in module.children():
        _add_observers(child, mapping)
    qconfig = getattr(module, "qconfig", None)
    if qconfig is None or type(module) not in mapping or isinstance(module, _NO_OBSERVER):
        return
    if isinstance(module, stubs.FloatFunctional):
        module.activation_post_process = qconfig.activation()  # its methods call it themselves
        return
    module.activation_post_process = qconfig.activation()
    module.register_forward_hook(_observer_forward_hook)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attach observers (NOTE [ Eager-mode quantization in three passes ]); run calibration data next."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    _add_observers(model, static_quant_module_mappings())
    return model


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Swap every observed (or QAT) module for its quantized twin."""
    if not inplace:
        module = copy.deepcopy(module)
    mapping = mapping or static_quant_module_mappings()
    _swap(module, mapping)
    if remove_qconfig:
        for m in module.modules():
            m.__dict__.pop("qconfig", None)
    return module


def _swap(module, mapping):
    for name, child in list(module.named_children()):
        if type(child) in mapping and getattr(child, "qconfig", None) is not None:
            setattr(module, name, mapping[type(child)].from_float(child))
        else:
            _swap(child, mapping)


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """Replace the Linear modules named by ``qconfig_spec`` (types or names; default all) with dynamic int8 ones.

    >>> import ember
    >>> from ember_quantization import quantize_dynamic
    >>> net = quantize_dynamic(ember.nn.Sequential(ember.nn.Linear(4, 2)), {ember.nn.Linear})
    >>> net[0]
    DynamicQuantizedLinear(in_features=4, out_features=2, dtype=ember.qint8, qscheme=ember.per_tensor_affine)
    """
    from ember_quantization.qconfig import default_dynamic_qconfig

    if dtype is not None and str(dtype).rsplit(".", 1)[-1] != "qint8":
        raise ValueError(f"ember's quantize_dynamic supports dtype qint8 only, got {dtype}")
    if not inplace:
        model = copy.deepcopy(model)
    spec = qconfig_spec if qconfig_spec is not None else {ember.nn.Linear}
    if not isinstance(spec, dict):
        spec = {key: default_dynamic_qconfig for key in spec}
    propagate_qconfig_(model, spec)
    mapping = mapping or dynamic_quant_module_mappings()
    _swap(model, mapping)
    for m in model.modules():
        m.__dict__.pop("qconfig", None)
    return model


def prepare_qat(model, mapping=None, inplace=False):
    """Swap Linear/Conv2d for QAT modules and attach FakeQuantize observers; then train."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    _swap(model, mapping or qat_module_mappings())
    _add_observers(model, static_quant_module_mappings())
    return model


__all__ = ["prepare", "convert", "quantize_dynamic", "prepare_qat", "propagate_qconfig_"]
