"""``ember_vision.ops``: the counterpart of ``torchvision.ops``.

PyTorch counterpart: torchvision/ops/__init__.py (torchvision 0.28).
"""

from ember_vision.ops import (
    deform_conv2d_compiled,
    deform_conv2d_cuda,
    deform_conv2d_kernel,
    deform_conv2d_onnx,  # noqa: F401  (registers its ONNX DeformConv)
)
from ember_vision.ops.deform_conv2d import DeformConv2d, deform_conv2d

# the ember.dispatcher.Op objects the plugin registers (ember.ops.torchvision.<name>)
OPS = deform_conv2d_kernel.OPS
deform_conv2d_compiled.register()  # the cpu kernel the install built, where it did
deform_conv2d_cuda.register()  # the CUDA kernel, where CuPy is

__all__ = ["DeformConv2d", "deform_conv2d"]
