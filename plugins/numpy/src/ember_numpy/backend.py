"""The ``cpu`` Backend record: NumPy as the array namespace, host memory as the device.

PyTorch counterpart: aten/src/ATen/detail/CPUGuardImpl.h and c10/core/CPUAllocator.cpp (v2.13);
the allocator's cache is allocator.py.
"""

import numpy as np

from ember.device import Backend


def _to_host(array):
    return array


def _from_host(array, index=None):
    return np.asarray(array)


def make_backend():
    from ember_numpy import allocator
    from ember_numpy.kernels import KERNELS

    allocator.enable_by_default()  # NOTE [ Caching freed memory on the CPU ]
    backend = Backend("cpu", np, to_host=_to_host, from_host=_from_host,
                      memory_stats=allocator.memory_stats, kernels=KERNELS,
                      module=allocator)
    backend.array_type = np.ndarray
    return backend
