"""``ember.autocast``: run the ops of a region in lower precision where that is safe,
by PyTorch's per-op policies.

PyTorch counterpart: torch/amp/autocast_mode.py (v2.13), with the policies of
aten/src/ATen/autocast_mode.cpp (ember/amp/state.py; NOTE [ Autocast at the
dispatcher ]). Device types ``cpu`` and ``cuda``; dtypes ``float16`` and ``bfloat16``,
with PyTorch's defaults: bfloat16 on cpu, float16 on cuda. (ember's CUDA backend has no
bfloat16 arrays, NOTE [ bfloat16 ] in ember/dtypes.py, so ``autocast("cuda",
dtype=ember.bfloat16)`` fails at the first cast.)
"""

import functools

from ember.amp.state import autocast_state
from ember.dispatch_modes import modes

_DEFAULT_DTYPE_NAMES = {"cpu": "bfloat16", "cuda": "float16"}


def _dtype_named(name):
    from ember import dtypes

    return getattr(dtypes, name)


def _supported(device_type):
    return (_dtype_named("float16"), _dtype_named("bfloat16"))


def get_autocast_dtype(device_type):
    """The dtype ``device_type``'s autocast casts to (its default when not in a region)."""
    current = autocast_state.dtypes.get(device_type)
    if current is not None:
        return current
    return _dtype_named(_DEFAULT_DTYPE_NAMES.get(device_type, "float16"))


def is_autocast_enabled(device_type=None):
    """Whether ``device_type`` autocasts now (None: any device type, as the dispatcher asks)."""
    if device_type is None:
        return autocast_state.enabled
    return device_type in autocast_state.dtypes


def is_autocast_available(device_type):
    """Whether ember can autocast on ``device_type``."""
    return device_type in _DEFAULT_DTYPE_NAMES


def is_autocast_cache_enabled():
    return autocast_state.cache_enabled


def clear_autocast_cache():
    autocast_state.cache.clear()


class autocast:
    """Context manager (and decorator): inside it, ops on ``device_type`` tensors cast
    their inputs by PyTorch's policies (products and convolutions to ``dtype``, losses
    and precision-hungry reductions to float32, ``cat``/``stack`` to the widest input).

    Args:
        device_type: ``"cpu"`` or ``"cuda"``.
        dtype: ``ember.float16`` or ``ember.bfloat16``; default float16 on cuda,
            bfloat16 on cpu (PyTorch's).
        enabled: False turns autocast off inside (also within an enclosing region).
        cache_enabled: cache the casts of weights within the region (default True).

    >>> import ember
    >>> w = ember.randn(4, 3, requires_grad=True)
    >>> with ember.autocast("cpu", dtype=ember.float16):
    ...     y = ember.nn.functional.linear(ember.randn(2, 3), w)
    >>> y.dtype
    ember.float16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else _dtype_named(_DEFAULT_DTYPE_NAMES[device_type])
        if enabled and self.fast_dtype not in _supported(device_type):
            raise RuntimeError(f"In {device_type.upper()} autocast, the target dtype {self.fast_dtype} is not "
                               f"supported: use one of {', '.join(map(str, _supported(device_type)))}")
        self._enabled = bool(enabled)
        self._cache_enabled = autocast_state.cache_enabled if cache_enabled is None else bool(cache_enabled)
        self._saved = []

    def __enter__(self):
        self._saved.append((autocast_state.dtypes.get(self.device), autocast_state.cache_enabled))
        if self._enabled:
            autocast_state.dtypes[self.device] = self.fast_dtype
        else:
            autocast_state.dtypes.pop(self.device, None)
        autocast_state.cache_enabled = self._cache_enabled
        autocast_state.enabled = bool(autocast_state.dtypes)
        modes.set_autocast(autocast_state.cast if autocast_state.enabled else None)
        return self

    def __exit__(self, *exc):
        previous, cache_enabled = self._saved.pop()
        if previous is None:
            autocast_state.dtypes.pop(self.device, None)
        else:
            autocast_state.dtypes[self.device] = previous
        autocast_state.cache_enabled = cache_enabled
        autocast_state.enabled = bool(autocast_state.dtypes)
        modes.set_autocast(autocast_state.cast if autocast_state.enabled else None)
        if not autocast_state.enabled:  # leaving the outermost region frees the cached casts
            autocast_state.cache.clear()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorated


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for an ``autograd.Function``'s forward: with ``cast_inputs`` set, run it
    with autocast off and its floating tensor arguments cast to ``cast_inputs`` (when
    autocast was on); otherwise run it as it is."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorated(*args, **kwargs):
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        args = [_cast_value(a, device_type, cast_inputs) for a in args]
        kwargs = {k: _cast_value(v, device_type, cast_inputs) for k, v in kwargs.items()}
        with autocast(device_type, enabled=False, dtype=get_autocast_dtype(device_type)):
            return fwd(*args, **kwargs)
    return decorated


def custom_bwd(bwd=None, *, device_type):
    """Decorator for an ``autograd.Function``'s backward (kept for PyTorch's signature: ember
    runs backward outside any autocast region already)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


def _cast_value(value, device_type, dtype):
    if hasattr(value, "_device") and value.is_floating_point() and value.device.type == device_type:
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_value(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_value(v, device_type, dtype) for k, v in value.items()}
    return value
