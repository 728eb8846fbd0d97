"""QConfig: which observer (or fake quantizer) makes the activation and weight qparams of a module.

PyTorch counterpart: torch/ao/quantization/qconfig.py (v2.13).

As torch's, ``get_default_qconfig("x86"|"fbgemm")`` observes activations with a
``HistogramObserver`` over the 7-bit range (``reduce_range=True``) and weights per
channel, symmetric qint8; "qnnpack" uses the full 8 bits and per-tensor weights.
"""

from collections import namedtuple

import ember
from ember_quantization.dtypes import per_channel_symmetric, per_tensor_symmetric, qint8, quint8
from ember_quantization.fake_quantize import FakeQuantize
from ember_quantization.histogram_observer import HistogramObserver
from ember_quantization.observer import (
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """A pair of observer factories: ``activation()`` and ``weight()`` each make a fresh observer."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, ember.nn.Module) or isinstance(weight, ember.nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. "
                             "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float_qparams_placeholder = PlaceholderObserver.with_args(dtype=quint8)


def get_default_qconfig(backend="x86", version=0):
    """The post-training static qconfig for ``backend`` ("x86", "fbgemm" or "qnnpack")."""
    if backend in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    raise AssertionError(f"backend: {backend} not supported. backend must be one of ['x86', 'fbgemm', 'qnnpack']")


def get_default_qat_qconfig(backend="x86", version=1):
    """Quantization-aware training: moving-average observers inside FakeQuantize.

    This is torch's ``version=0`` QAT qconfig (separate observer and fake-quantize steps);
    torch's default ``version=1`` fuses them into one kernel (``FusedMovingAvgObsFakeQuantize``)
    whose qparams differ from the unfused ones in the last digits; ember has the unfused form.
    """
    if backend not in ("x86", "fbgemm", "qnnpack"):
        raise AssertionError(f"backend: {backend} not supported. backend must be one of ['x86', 'fbgemm', "
                             "'qnnpack']")
    reduce_range = backend != "qnnpack"
    activation = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                        reduce_range=reduce_range)
    if backend == "qnnpack":
        weight = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127,
                                        dtype=qint8, qscheme=per_tensor_symmetric)
    else:
        weight = FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128,
                                        quant_max=127, dtype=qint8, qscheme=per_channel_symmetric)
    return QConfig(activation=activation, weight=weight)


__all__ = ["QConfig", "default_qconfig", "default_dynamic_qconfig", "get_default_qconfig",
           "get_default_qat_qconfig"]
