"""ember-quantization: eager-mode quantization for ember, as a plugin.

PyTorch counterpart: torch/ao/quantization/__init__.py and torch/ao/nn/quantized/__init__.py (v2.13).

ember imports this module when it first needs a catalogue and calls the hook below, which
registers the quantized operators (``ember.ops.quantized.*``, kernels.py). The user-facing
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
    qint8,
    qint32,
    quint8,
)
from ember_quantization.qtensor import QTensor, dequantize, quantize_per_channel, quantize_per_tensor

__version__ = "0.1.0"


@hookimpl
def ember_register_ops(register):
    from ember_quantization.kernels import all_ops

    for op in all_ops():
        register(op)


def __getattr__(name):
    """The rest of the API, imported on first use (keeps ``import ember_quantization`` light)."""
    from importlib import import_module

    if name.startswith("__") or name in _API_MODULES:
        raise AttributeError(f"module 'ember_quantization' has no attribute {name!r}")
    for module in _API_MODULES:
        found = import_module(f"ember_quantization.{module}")
        if name in getattr(found, "__all__", ()):
            return getattr(found, name)
    raise AttributeError(f"module 'ember_quantization' has no attribute {name!r}")


_API_MODULES = ("observer", "histogram_observer", "fake_quantize", "qconfig", "stubs", "fuse", "quantize")


__all__ = ["QTensor", "dequantize", "quantize_per_channel", "quantize_per_tensor", "quint8", "qint8", "qint32",
           "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric"]
