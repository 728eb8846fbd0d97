"""ember-quantization: eager-mode quantization for ember, as a plugin.

PyTorch counterpart: torch/ao/quantization/__init__.py and torch/ao/nn/quantized/__init__.py (v2.13).

ember imports this module when it first needs a catalogue and calls the hook below, which
registers the quantized operators (``ember.ops.quantized.*``, kernels.py), and the
tensor type ``"quantized"`` through which the core's checkpoint reader rebuilds a
``QTensor`` (torch's ``_rebuild_qtensor``) without importing this plugin. The user-facing
API (quantized tensors, observers, ``prepare``/``convert``, ``quantize_dynamic``,
``prepare_qat``, the quantized modules) is imported from this package, as torch's is from
``torch.ao.quantization``; the quantized modules live in ``ember_quantization.nn.quantized``
(they are not ``ember.nn`` names, which would clash with the float ``Linear``).
"""

from ember.plugins import hookimpl
from ember_quantization.dtypes import (
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
)

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_quantization.kernels import all_ops

    for op in all_ops():
        register(op)


@hookimpl
def ember_register_tensor_types(register):
    from ember_quantization.qtensor import from_checkpoint

    register(from_checkpoint, name="quantized")


def __getattr__(name):
    """The API, imported on first use: ``import ember_quantization`` (which ember does to
    find the plugin's hooks) imports nothing else.

    Only the names in ``_LAZY`` import anything: pluggy probes every plugin module with
    ``hasattr`` for each hook name while ember builds its catalogues, and an import here
    then (quantize.py subclasses ``ember.nn.Linear``, a catalogue lookup) would break
    every plugin's registration."""
    from importlib import import_module

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ember_quantization' has no attribute {name!r}")
    return getattr(import_module(f"ember_quantization.{module}"), name)


_API = {
    "qtensor": ("QTensor", "quantize_per_tensor", "quantize_per_channel", "dequantize", "quint8", "qint8", "qint32"),
    "observer": ("ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
                 "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "PlaceholderObserver",
                 "default_observer", "default_weight_observer", "default_per_channel_weight_observer",
                 "default_dynamic_quant_observer"),
    "histogram_observer": ("HistogramObserver",),
    "fake_quantize": ("FakeQuantize", "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"),
    "qconfig": ("QConfig", "default_qconfig", "default_dynamic_qconfig", "get_default_qconfig",
                "get_default_qat_qconfig"),
    "stubs": ("QuantStub", "DeQuantStub", "FloatFunctional"),
    "fuse": ("fuse_modules", "fuse_conv_bn_eval"),
    "quantize": ("prepare", "convert", "quantize_dynamic", "prepare_qat", "propagate_qconfig_"),
}
_LAZY = {name: module for module, names in _API.items() for name in names}


__all__ = ["QTensor", "dequantize", "quantize_per_channel", "quantize_per_tensor", "quint8", "qint8", "qint32",
           "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric"]
