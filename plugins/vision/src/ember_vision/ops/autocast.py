"""The autocast kernels of torchvision's ops: inside an ``ember.autocast`` region they
run in float32 whatever the region's dtype, and give their result back in the input's
dtype (nms's indices stay int64).

PyTorch counterpart: torchvision/csrc/ops/autocast/deform_conv2d_kernel.cpp,
torchvision/csrc/ops/autocast/roi_align_kernel.cpp,
torchvision/csrc/ops/autocast/roi_pool_kernel.cpp,
torchvision/csrc/ops/autocast/ps_roi_align_kernel.cpp,
torchvision/csrc/ops/autocast/ps_roi_pool_kernel.cpp and
torchvision/csrc/ops/autocast/nms_kernel.cpp (``TORCH_LIBRARY_IMPL(torchvision,
AutocastCPU, m)`` and ``Autocast`` for CUDA) (torchvision 0.28).

# NOTE [ torchvision's ops under autocast ]
# None of torchvision's ops is on aten's autocast lists (they are not aten's), so without
# a kernel of their own they would run on whatever dtypes reach them: a bfloat16 feature
# map from a convolution that autocast ran in bfloat16, with float32 boxes, is refused by
# roi_align's dtype check. torchvision therefore registers, for each op, a kernel at the
# Autocast keys that casts every floating input to float32 (``cached_cast``: float64
# stays float64, integers stay integers), runs the op with autocast excluded, and casts
# the outputs back to the input's dtype, the second outputs of roi_pool and the
# position-sensitive ops (argmax, channel mapping: integers) included. nms returns
# indices and casts nothing back. The casts are ops like any other, so autograd runs back
# through them, and the backward ops see float32.
"""

import ember
from ember import library
from ember.amp.state import cached_cast
from ember_vision.ops.deform_conv2d_kernel import deform_conv2d
from ember_vision.ops.nms import nms_op
from ember_vision.ops.ps_roi_align import ps_roi_align_op
from ember_vision.ops.ps_roi_pool import ps_roi_pool_op
from ember_vision.ops.roi_align import roi_align_op
from ember_vision.ops.roi_pool import roi_pool_op

DEVICE_TYPES = ("cpu", "cuda")  # torchvision's AutocastCPU and Autocast (CUDA) keys


def _float32(*tensors):
    return tuple(cached_cast(ember.float32, t) for t in tensors)


def deform_conv2d_autocast(input, weight, offset, mask, bias, **attrs):
    tensors = _float32(input, weight, offset, mask, bias)
    return deform_conv2d(*tensors, **attrs).to(input.dtype)


def roi_align_autocast(input, rois, **attrs):
    return roi_align_op(*_float32(input, rois), **attrs).to(input.dtype)


def _two_outputs_autocast(op):
    """The autocast kernel of an op returning ``(output, index)``: both back in the input's
    dtype, as torchvision's roi_pool, ps_roi_pool and ps_roi_align kernels cast them."""
    def autocast_kernel(input, rois, **attrs):
        output, index = op(*_float32(input, rois), **attrs)
        return output.to(input.dtype), index.to(input.dtype)
    autocast_kernel.__name__ = op.name + "_autocast"
    return autocast_kernel


def nms_autocast(boxes, scores, **attrs):
    return nms_op(*_float32(boxes, scores), **attrs)


def register():
    """Register every kernel above for the cpu and cuda device types."""
    library.register_autocast_kernel(deform_conv2d, DEVICE_TYPES, deform_conv2d_autocast)
    library.register_autocast_kernel(roi_align_op, DEVICE_TYPES, roi_align_autocast)
    for op in (roi_pool_op, ps_roi_align_op, ps_roi_pool_op):
        library.register_autocast_kernel(op, DEVICE_TYPES, _two_outputs_autocast(op))
    library.register_autocast_kernel(nms_op, DEVICE_TYPES, nms_autocast)
