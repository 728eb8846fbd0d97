"""``ember_vision.ops``: the counterpart of ``torchvision.ops``.

PyTorch counterpart: torchvision/ops/__init__.py (torchvision 0.28).
"""

from ember_vision.ops import (
    _register_onnx_ops,
    autocast,
    deform_conv2d_compiled,
    deform_conv2d_cuda,
    deform_conv2d_kernel,
    deform_conv2d_onnx,  # noqa: F401  (registers its ONNX DeformConv)
    roi_compiled,
)
from ember_vision.ops import nms as _nms
from ember_vision.ops import ps_roi_align as _ps_roi_align
from ember_vision.ops import ps_roi_pool as _ps_roi_pool
from ember_vision.ops import roi_align as _roi_align
from ember_vision.ops import roi_pool as _roi_pool
from ember_vision.ops.boxes import (
    batched_nms,
    box_area,
    box_convert,
    box_iou,
    clip_boxes_to_image,
    complete_box_iou,
    distance_box_iou,
    generalized_box_iou,
    nms,
    remove_small_boxes,
)
from ember_vision.ops.deform_conv2d import DeformConv2d, deform_conv2d
from ember_vision.ops.drop_block import DropBlock2d, DropBlock3d, drop_block2d, drop_block3d
from ember_vision.ops.feature_pyramid_network import FeaturePyramidNetwork
from ember_vision.ops.focal_loss import sigmoid_focal_loss
from ember_vision.ops.misc import Conv2dNormActivation, FrozenBatchNorm2d, SqueezeExcitation
from ember_vision.ops.poolers import MultiScaleRoIAlign
from ember_vision.ops.ps_roi_align import PSRoIAlign, ps_roi_align
from ember_vision.ops.ps_roi_pool import PSRoIPool, ps_roi_pool
from ember_vision.ops.roi_align import RoIAlign, roi_align
from ember_vision.ops.roi_pool import RoIPool, roi_pool
from ember_vision.ops.stochastic_depth import StochasticDepth, stochastic_depth

_register_onnx_ops.register()
autocast.register()  # float32 inside ember.autocast, as torchvision's Autocast kernels

# the ember.dispatcher.Op objects the plugin registers (ember.ops.torchvision.<name>)
OPS = deform_conv2d_kernel.OPS + (
    _nms.nms_op,
    _roi_align.roi_align_op, _roi_align.roi_align_backward_op,
    _roi_pool.roi_pool_op, _roi_pool.roi_pool_backward_op,
    _ps_roi_align.ps_roi_align_op, _ps_roi_align.ps_roi_align_backward_op,
    _ps_roi_pool.ps_roi_pool_op, _ps_roi_pool.ps_roi_pool_backward_op,
)

deform_conv2d_compiled.register()  # the cpu kernels the install built, where it did
roi_compiled.register()
deform_conv2d_cuda.register()  # the CUDA kernel, where CuPy is

__all__ = [
    "DeformConv2d", "deform_conv2d",
    "batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "complete_box_iou",
    "distance_box_iou", "generalized_box_iou", "nms", "remove_small_boxes",
    "RoIAlign", "roi_align", "RoIPool", "roi_pool", "PSRoIAlign", "ps_roi_align", "PSRoIPool", "ps_roi_pool",
    "MultiScaleRoIAlign", "FeaturePyramidNetwork", "sigmoid_focal_loss", "Conv2dNormActivation",
    "FrozenBatchNorm2d", "SqueezeExcitation", "StochasticDepth", "stochastic_depth", "DropBlock2d", "DropBlock3d",
    "drop_block2d", "drop_block3d",
]
