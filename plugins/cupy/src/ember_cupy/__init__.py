"""ember-cupy: the ``cuda`` backend, arrays in GPU memory through CuPy.

PyTorch counterpart: aten/src/ATen/cuda/ and c10/cuda/ (the CUDA device services),
torch/cuda/__init__.py (the device module) and aten/src/ATen/native/cuda/ (kernels) (v2.13).

The core's generic kernels are written against the namespace NumPy and CuPy share, so
this plugin names the device, hands CuPy to them and adds a few kernels where CuPy
needs its own (``kernels.py``). Importing it never imports CuPy: the backend registers
whether or not CUDA is there, and says why not when it is not (``runtime.py``).
"""

from ember.plugins import hookimpl


@hookimpl
def ember_register_backends(register):
    from ember_cupy.backend import make_backend

    register(make_backend())


@hookimpl
def ember_register_comm_backends(register):
    from ember_cupy.nccl import create_world

    register(create_world, name="nccl", devices=("cuda",))
