"""The ``cpu`` Backend record: NumPy as the array namespace, host memory as the device.

PyTorch counterpart: aten/src/ATen/detail/CPUGuardImpl.h and c10/core/CPUAllocator.cpp (v2.13).
"""

import numpy as np

from ember.device import Backend


def _to_host(array):
    return array


def _from_host(array, index=None):
    return np.asarray(array)


def _memory_stats(index=None):
    return {}


def make_backend():
    from ember_numpy.kernels import KERNELS

    backend = Backend("cpu", np, to_host=_to_host, from_host=_from_host,
                      memory_stats=_memory_stats, kernels=KERNELS)
    backend.array_type = np.ndarray
    return backend
