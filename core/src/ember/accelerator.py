"""``ember.accelerator``: the device-agnostic view of "the accelerator" (CUDA when the
``cuda`` backend sees a GPU, else none), for scripts that pick a device without
naming CUDA.

PyTorch counterpart: torch/accelerator/__init__.py (v2.13). ember's only accelerator
type is ``cuda`` (ember-cupy); without it ``is_available()`` is False,
``current_accelerator()`` is None and what needs a device raises PyTorch's error.
ember leaves out streams, graphs and the host-cache functions.
"""

from ember import cuda as _cuda
from ember.device import device as _device

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available():
    """True when an accelerator (a CUDA device) can be used."""
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """``ember.device("cuda")`` when CUDA is there, else None (as PyTorch without one)."""
    if _cuda.is_available():
        return _device("cuda")
    return None


def device_count():
    """How many accelerator devices there are (0 without one)."""
    return _cuda.device_count()


def _require():
    if not is_available():
        raise RuntimeError(_NONE_AVAILABLE)


def current_device_index():
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device):
    """Make ``device`` (an index, or an accelerator device) current."""
    _require()
    _cuda.set_device(device)


set_device_idx = set_device_index


class device_index:
    """Context manager: ``device`` is current inside, the previous one after (None: no change)."""

    def __init__(self, device):
        self.device = device
        self.previous = None

    def __enter__(self):
        if self.device is not None:
            self.previous = current_device_index()
            set_device_index(self.device)

    def __exit__(self, *exc):
        if self.previous is not None:
            set_device_index(self.previous)
        return False


def synchronize(device=None):
    """Wait for the accelerator's queued work."""
    _require()
    _cuda.synchronize(device)


def empty_cache():
    """Release cached accelerator memory (nothing without one)."""
    _cuda.empty_cache()


def memory_allocated(device=None):
    return _cuda.memory_allocated(device) if is_available() else 0


def max_memory_allocated(device=None):
    return _cuda.max_memory_allocated(device) if is_available() else 0


def memory_reserved(device=None):
    return _cuda.memory_reserved(device) if is_available() else 0


def memory_stats(device=None):
    return _cuda.memory_stats(device) if is_available() else {}


def reset_peak_memory_stats(device=None):
    if is_available():
        _cuda.reset_peak_memory_stats(device)


__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "device_index", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "memory_stats", "reset_peak_memory_stats"]
