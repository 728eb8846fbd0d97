"""The ``cuda`` Backend record: CuPy as the array namespace, GPU memory as the device.

PyTorch counterpart: c10/cuda/impl/CUDAGuardImpl.h (the device services) and
torch/utils/backend_registration.py (a device type and its module) (v2.13).

The record exists whether or not CUDA does, so ``ember plugins`` lists the backend and
ember's errors can say why it cannot be used. Its ``xp`` stays None until
``is_available()`` first answers True (NOTE [ Probing CUDA lazily ] in runtime.py);
the core only reads ``xp`` from a backend that said it is available.
"""

from ember.device import Backend
from ember_cupy import runtime
from ember_cupy.kernels import KERNELS


def make_backend():
    backend = Backend("cuda", None, to_host=runtime.to_host, from_host=runtime.from_host,
                      synchronize=runtime.synchronize, device_count=runtime.device_count,
                      memory_stats=runtime.memory_stats, kernels=KERNELS, module=runtime)

    def is_available():
        if not runtime.is_available():
            return False
        if backend.xp is None:  # the first time: hand CuPy to the generic kernels
            backend.xp = runtime.cupy()
            backend.array_type = backend.xp.ndarray
        return True

    backend.is_available = is_available
    return backend
