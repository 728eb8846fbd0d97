"""Observers: modules that watch the values flowing through them and choose scale and zero point.

PyTorch counterpart: torch/ao/quantization/observer.py (v2.13). ember has the min/max
family (``MinMaxObserver``, ``MovingAverageMinMaxObserver``, ``PerChannelMinMaxObserver``,
``MovingAveragePerChannelMinMaxObserver``) and ``PlaceholderObserver``; ``HistogramObserver``
is in histogram_observer.py. It leaves out ``per_channel_affine_float_qparams`` and the
float8/uint16 dtypes.

An observer is an identity in ``forward`` that records statistics (buffers ``min_val``
and ``max_val``, so they travel in the state dict under torch's keys);
``calculate_qparams`` turns them into ``(scale, zero_point)`` tensors, with torch's
float32 arithmetic so the numbers match bit for bit.
"""

import math
import warnings
from functools import partial

import ember
from ember_quantization.dtypes import (
    as_qdtype,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    qint32,
    quint8,
)

FLOAT32_EPS = 1.1920928955078125e-07


class _PartialWrapper:
    """``Observer.with_args(...)``: a factory remembering keyword arguments (torch's spelling)."""

    def __init__(self, factory):
        self.p = factory

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def __repr__(self):
        return self.p.__repr__()

    def with_args(self, **kwargs):
        return _PartialWrapper(partial(self.p, **kwargs))


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The integer range observers target: the dtype's, a custom one, halved by ``reduce_range``."""
    if has_customized_qrange:
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype is qint8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype is quint8:
        return (0, 127) if reduce_range else (0, 255)
    return -(2 ** 31), 2 ** 31 - 1


class ObserverBase(ember.nn.Module):
    """An identity module that records statistics; ``calculate_qparams`` reads them."""

    with_args = classmethod(_with_args)

    def __init__(self, dtype=quint8, is_dynamic=False):
        super().__init__()
        self.dtype = as_qdtype(dtype) if not isinstance(dtype, ember.dtype) else dtype
        self.is_dynamic = is_dynamic


class UniformQuantizationObserverBase(ObserverBase):
    """The qscheme, dtype and integer range shared by the min/max observers."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=FLOAT32_EPS, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.register_buffer("eps", ember.tensor([eps]))
        if qscheme not in (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric):
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine and per_channel_symmetric quantization scheme")
        if self.dtype not in (qint8, quint8, qint32):
            raise AssertionError(f"Default Observer only works for {(qint8, quint8, qint32)} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if quant_min >= quant_max:
                raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             self.dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """Scale and zero point (float32 and int64 tensors) mapping [min_val, max_val]
        onto the range."""
        if not _min_max_valid(min_val, max_val):
            return ember.tensor([1.0]), ember.tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_neg = ember.minimum(min_val, ember.zeros_like(min_val))
        max_pos = ember.maximum(max_val, ember.zeros_like(max_val))
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_pos = ember.maximum(-min_neg, max_pos)
            scale = ember.maximum(max_pos / (float(quant_max - quant_min) / 2), self.eps)
            middle = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
            zero_point = ember.full(min_neg.shape, middle if self.dtype is quint8 else 0,
                                    dtype=ember.int64)
        else:
            scale = ember.maximum((max_pos - min_neg) / float(quant_max - quant_min),
                                  self.eps)
            zero_point = quant_min - ember.round(min_neg / scale).to(ember.int32)
            zero_point = ember.clamp(zero_point, quant_min, quant_max)  # int32, as torch
        if scale.ndim == 0:  # per tensor: shape (1,), like FakeQuantize's buffers
            scale = scale.reshape(1)
        if zero_point.ndim == 0:
            zero_point = zero_point.reshape(1)
        return scale.to(ember.float32), zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


def _min_max_valid(min_val, max_val):
    """False (with torch's warning) before any data was seen; min must not exceed max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                      stacklevel=3)
        return False
    if min_val.ndim == 0 and math.isinf(min_val.item()) and math.isinf(max_val.item()):
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                      stacklevel=3)
        return False
    if bool((min_val > max_val).any()):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class MinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of everything seen; per-tensor qparams."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=FLOAT32_EPS, is_dynamic=False, **kwargs):
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("MinMaxObserver's qscheme only support per_tensor_symmetric and "
                                      "per_tensor_affine.")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.register_buffer("min_val", ember.tensor(float("inf")))
        self.register_buffer("max_val", ember.tensor(float("-inf")))
        if qscheme is per_tensor_symmetric and reduce_range and self.dtype is quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        self.min_val.copy_(ember.minimum(x.min(), self.min_val))
        self.max_val.copy_(ember.maximum(x.max(), self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.fill_(float("inf"))
        self.max_val.fill_(float("-inf"))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving averages of the batch minimum and maximum (the first batch sets them)."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=FLOAT32_EPS, is_dynamic=False, **kwargs):
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                                      f"averaging constant of {averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        current_min, current_max = x.min(), x.max()
        if math.isinf(self.min_val.item()) and math.isinf(self.max_val.item()):
            min_val, max_val = current_min, current_max
        else:
            min_val = self.min_val + self.averaging_constant * (current_min - self.min_val)
            max_val = self.max_val + self.averaging_constant * (current_max - self.max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Minimum and maximum per slice along ``ch_axis`` (weights: one scale per output channel)."""

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=FLOAT32_EPS, is_dynamic=False, **kwargs):
        if qscheme not in (per_channel_affine, per_channel_symmetric):
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support per_channel_symmetric "
                                      "and per_channel_affine.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", ember.tensor([]))
        self.register_buffer("max_val", ember.tensor([]))
        if qscheme is per_channel_symmetric and reduce_range and self.dtype is quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def _channel_extremes(self, x_orig):
        """Per-channel (min, max) of this batch: channels to the front, the rest flattened."""
        x = x_orig.detach().movedim(self.ch_axis, 0).to(self.min_val.dtype).flatten(1)
        return x.amin(dim=1), x.amax(dim=1)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        current_min, current_max = self._channel_extremes(x_orig)
        if self.min_val.numel() == 0:
            min_val, max_val = current_min, current_max
        else:
            min_val, max_val = ember.minimum(current_min, self.min_val), ember.maximum(current_max, self.max_val)
        self.min_val, self.max_val = min_val.clone(), max_val.clone()
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # min_val/max_val start empty: take the saved shapes, as torch's observer does
        for name in ("min_val", "max_val"):
            if prefix + name in state_dict:
                setattr(self, name, state_dict[prefix + name].clone())
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_min_max_vals(self):
        self.min_val, self.max_val = ember.tensor([]), ember.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel moving averages of the batch minimum and maximum."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=FLOAT32_EPS, is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        current_min, current_max = self._channel_extremes(x_orig)
        if self.min_val.numel() == 0:
            min_val, max_val = current_min, current_max
        else:
            min_val = self.min_val + self.averaging_constant * (current_min - self.min_val)
            max_val = self.max_val + self.averaging_constant * (current_max - self.max_val)
        self.min_val, self.max_val = min_val.clone(), max_val.clone()
        return x_orig


class PlaceholderObserver(ObserverBase):
    """Observes nothing; carries the dtype (and ``is_dynamic``) that ``convert`` reads."""

    def __init__(self, dtype=ember.float32, custom_op_name="", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme if qscheme is not None else per_tensor_affine
        self.quant_min, self.quant_max = quant_min, quant_max

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=qint8,
                                                                         qscheme=per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=quint8, quant_min=0, quant_max=255,
                                                               is_dynamic=True)

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "PlaceholderObserver",
           "default_observer", "default_weight_observer", "default_per_channel_weight_observer",
           "default_dynamic_quant_observer"]
