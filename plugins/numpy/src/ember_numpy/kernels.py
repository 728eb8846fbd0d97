"""NumPy-specific kernels that replace the core's generic ones on ``cpu``.

PyTorch counterpart: aten/src/ATen/native/cpu/*.cpp (v2.13).

Empty for now: every core op runs its generic kernel with ``xp = numpy``. A kernel
goes here when a NumPy-only function beats the generic one (measured in bench/).
"""

KERNELS = {}
