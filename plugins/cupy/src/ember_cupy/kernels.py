"""The ``cuda`` backend's kernel overrides, keyed by op qualname.

PyTorch counterpart: the ``CUDA:`` dispatch entries of
aten/src/ATen/native/native_functions.yaml (v2.13).

Every op not listed here runs its generic kernel with ``xp = cupy`` (the core writes
them against the namespace NumPy and CuPy share): elementwise math, reductions,
shape ops, matmul (cuBLAS through ``cupy.matmul``), softmax, sorting, convolution
(im2col + matmul), embedding's backward (float ``add.at``, CUDA atomicAdd).
"""

from ember_cupy import fused, scatter

KERNELS = {
    "aten::threshold_backward": fused.threshold_backward,
    "aten::index_put": scatter.index_put,
    "aten::index_add": scatter.index_add,
    "aten::scatter": scatter.scatter,
    "aten::scatter_add": scatter.scatter_add,
}
