"""A test-only backend: the device type ``fake``, NumPy arrays behind it.

Loaded by tests with ``ember.plugins.register(fake_device)``. Its arrays are plain
NumPy arrays, but it is a distinct device, so tests prove without a GPU that dispatch,
transfers (``t.to("fake")``), gradients across ``.to``, the device-mixing error and
per-backend kernel overrides work. ``STATS`` counts transfers and override calls.
"""

import numpy as np

from ember.device import Backend
from ember.plugins import hookimpl

STATS = {"to_host": 0, "from_host": 0, "mul": 0}


def reset_stats():
    for key in STATS:
        STATS[key] = 0


def _to_host(array):
    STATS["to_host"] += 1
    return array.copy()


def _from_host(array, index=None):
    STATS["from_host"] += 1
    return np.array(array, copy=True)


def _mul_kernel(xp, a, b):
    """The fake backend's own ``aten::mul``: the generic result, counted."""
    STATS["mul"] += 1
    return xp.multiply(a, b)


def make_backend():
    backend = Backend("fake", np, to_host=_to_host, from_host=_from_host, kernels={"aten::mul": _mul_kernel})
    backend.array_type = np.ndarray
    return backend


@hookimpl
def ember_register_backends(register):
    register(make_backend())
