"""``ember.cpu``: the CPU device's services, and its allocator's memory figures.

PyTorch counterpart: torch/cpu/__init__.py (``is_available``, ``device_count``,
``current_device``, ``synchronize``) (v2.13), with ``memory_stats`` and ``empty_cache``
shaped like torch/cuda/memory.py's: torch has none for the CPU, ember's ``cpu``
backend caches freed memory (NOTE [ Caching freed memory on the CPU ] in
ember_numpy/allocator.py) and these show and empty that cache.
"""


def _backend():
    from ember.plugins import registry

    return registry.backend("cpu")


def is_available():
    """The CPU is always there."""
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU work is done when the call returns: nothing to wait for."""


def memory_stats(device=None):
    """The ``cpu`` backend allocator's figures (bytes in use, reserved, cached free)."""
    return dict(_backend().memory_stats(None))


def memory_allocated(device=None):
    return memory_stats().get("allocated_bytes.all.current", 0)


def memory_reserved(device=None):
    return memory_stats().get("reserved_bytes.all.current", 0)


def empty_cache():
    """Give the memory the allocator keeps for reuse back to the operating system."""
    module = _backend().module
    if module is not None and hasattr(module, "empty_cache"):
        module.empty_cache()
