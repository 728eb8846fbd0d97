"""``ember.cuda``: is a CUDA device there, how many, wait for it.

PyTorch counterpart: torch/cuda/__init__.py (``is_available``, ``device_count``,
``synchronize``) (v2.13). ember leaves out streams, events, memory management and the
per-thread current device: the ``cuda`` backend plugin (ember-cupy) provides the
services, and this module only asks it. Without that plugin, or without a GPU,
``is_available()`` is False and nothing here raises except ``synchronize``.
"""

from ember.device import device as _device


def _backend():
    """The ``cuda`` Backend record, or None when no plugin registers it."""
    from ember.plugins import registry

    return registry.find_backend("cuda")


def is_available():
    """True when a ``cuda`` backend is installed and sees at least one device."""
    backend = _backend()
    return backend is not None and bool(backend.is_available())


def device_count():
    """The number of CUDA devices the ``cuda`` backend sees (0 without one)."""
    backend = _backend()
    if backend is None or not backend.is_available():
        return 0
    return int(backend.device_count())


def synchronize(device=None):
    """Wait until every queued kernel on ``device`` (default: the current one) has finished."""
    index = None
    if device is not None:
        device = _device(device) if not isinstance(device, int) else _device("cuda", device)
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    from ember.plugins import registry

    registry.backend("cuda").synchronize(index)  # raises, naming ember-cupy, when there is none


__all__ = ["is_available", "device_count", "synchronize"]
