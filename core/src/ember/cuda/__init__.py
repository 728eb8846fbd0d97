"""``ember.cuda``: is a CUDA device there, which one is current, its memory, its seed.

PyTorch counterpart: torch/cuda/__init__.py (``is_available``, ``device_count``,
``current_device``, ``set_device``, ``synchronize``, ``manual_seed``) and
torch/cuda/memory.py (v2.13); streams and events are in streams.py. ember leaves out
graphs and the per-thread current device: the ``cuda`` backend plugin (ember-cupy) provides the
services (its Backend's ``module``), and this module only asks it.

Without that plugin, or without a GPU, ``is_available()`` is False, ``device_count()``
and the memory figures are 0, seeding and ``empty_cache`` do nothing (as in a CPU-only
PyTorch), and what needs a device (``current_device``, ``set_device``,
``synchronize``, ``get_device_name``) raises a RuntimeError that says why.
"""

from ember.cuda.streams import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)
from ember.device import device as _device


def _backend():
    """The ``cuda`` Backend record, or None when no plugin registers it."""
    from ember.plugins import registry

    return registry.find_backend("cuda")


def _usable_backend():
    """The ``cuda`` Backend; raises, naming ember-cupy or why CUDA is unusable, when there is none."""
    from ember.plugins import registry

    return registry.backend("cuda")


def _index(device):
    """The device index ``device`` names (None: the current device)."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    device = _device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return device.index


def is_available():
    """True when a ``cuda`` backend is installed and sees at least one device; never raises."""
    backend = _backend()
    return backend is not None and bool(backend.is_available())


def device_count():
    """The number of CUDA devices the ``cuda`` backend sees (0 without one)."""
    backend = _backend()
    if backend is None or not backend.is_available():
        return 0
    return int(backend.device_count())


def current_device():
    """The index of the device ``"cuda"`` means (CuPy's current device)."""
    return int(_usable_backend().module.current_device())


def set_device(device):
    """Make ``device`` (an index, ``"cuda:1"`` or a device) the current one; a
    negative index does nothing, as in PyTorch."""
    index = _index(device)
    if index is not None and index >= 0:
        _usable_backend().module.set_device(index)


def synchronize(device=None):
    """Wait until every queued kernel on ``device`` (default: the current one) has finished."""
    _usable_backend().synchronize(_index(device))


def get_device_name(device=None):
    """The device's marketing name, e.g. ``'NVIDIA A100-SXM4-40GB'``."""
    return _usable_backend().module.get_device_name(_index(device))


class _CudaDeviceProperties:
    """What ``get_device_properties`` returns (torch's ``_CudaDeviceProperties``)."""

    def __init__(self, raw):
        name = raw["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.major, self.minor = int(raw["major"]), int(raw["minor"])
        self.total_memory = int(raw["totalGlobalMem"])
        self.multi_processor_count = int(raw["multiProcessorCount"])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2 ** 20}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """The device's name, compute capability, memory and multiprocessor count; raises,
    saying why, without CUDA (torch: an AssertionError on a CPU-only build)."""
    return _CudaDeviceProperties(_usable_backend().module.get_device_properties(_index(device)))


def get_device_capability(device=None):
    """The device's compute capability ``(major, minor)``, e.g. ``(8, 0)`` for an A100."""
    properties = get_device_properties(device)
    return properties.major, properties.minor


# --- memory ------------------------------------------------------------------------

def memory_stats(device=None):
    """The backend's memory statistics for ``device`` (``{}`` without CUDA)."""
    index = _index(device)
    return dict(_usable_backend().memory_stats(index)) if is_available() else {}


def memory_allocated(device=None):
    """Bytes held by tensors on ``device`` now (0 without CUDA)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """The most bytes tensors have held on ``device`` since the start or the last
    ``reset_peak_memory_stats`` (0 without CUDA)."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Bytes the memory pool holds on ``device``, in use or cached (0 without CUDA)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def reset_peak_memory_stats(device=None):
    """Start ``max_memory_allocated`` again from the bytes in use now."""
    _usable_backend().module.reset_peak_memory_stats(_index(device))


def empty_cache():
    """Return the memory pool's unused blocks to the driver (nothing without CUDA)."""
    backend = _backend()
    if backend is not None and backend.is_available():
        backend.module.empty_cache()


# --- random numbers ----------------------------------------------------------------------

def manual_seed(seed):
    """Seed the current device's generator (nothing without CUDA, as in PyTorch).

    ember's random factories draw on the host (ember/random.py), so ``ember.manual_seed``
    already fixes the values of ``ember.randn(..., device="cuda")``; this seeds kernels
    that draw on the device.
    """
    backend = _backend()
    if backend is not None and backend.is_available():
        backend.module.manual_seed(int(seed))


def manual_seed_all(seed):
    """Seed every device's generator (nothing without CUDA)."""
    backend = _backend()
    if backend is not None and backend.is_available():
        backend.module.manual_seed_all(int(seed))


__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream", "stream",
           "is_available", "device_count", "current_device", "set_device", "synchronize", "get_device_name",
           "get_device_properties", "get_device_capability",
           "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "manual_seed", "manual_seed_all"]
