"""PyTorch's device-specific AMP spellings, ``torch.cuda.amp`` and ``torch.cpu.amp``:
``autocast`` with the device type filled in, and ``GradScaler``.

PyTorch counterpart: torch/cuda/amp/autocast_mode.py and torch/cpu/amp/autocast_mode.py
(v2.13), deprecated there in favour of ``torch.amp``; kept so older scripts run.
"""

import types

from ember.amp.autocast_mode import autocast as _autocast
from ember.amp.autocast_mode import custom_bwd, custom_fwd
from ember.amp.grad_scaler import GradScaler as _GradScaler


def _namespace(device_type, default_dtype_name):
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from ember import dtypes

        dtype = dtype if dtype is not None else getattr(dtypes, default_dtype_name, None)
        return _autocast(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            super().__init__(device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    namespace = types.ModuleType(f"ember.{device_type}.amp", f"``ember.{device_type}.amp``: see ember.amp.")
    namespace.autocast, namespace.GradScaler = autocast, GradScaler
    namespace.custom_fwd, namespace.custom_bwd = custom_fwd, custom_bwd
    return namespace


cuda_amp = _namespace("cuda", "float16")
cpu_amp = _namespace("cpu", "bfloat16")
