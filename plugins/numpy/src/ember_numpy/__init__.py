"""ember-numpy: the ``cpu`` backend, arrays in host memory through NumPy.

PyTorch counterpart: aten/src/ATen/native/cpu/ (the CPU kernels) and
c10/core/impl/DeviceGuardImplInterface.h (the per-device services) (v2.13).

The generic kernels of the core already speak NumPy, so this plugin only names the
device, its array namespace and its services, and adds kernels where a NumPy-specific
one is faster (see ``kernels.py``).
"""

from ember.plugins import hookimpl


@hookimpl
def ember_register_backends(register):
    from ember_numpy.backend import make_backend

    register(make_backend())
