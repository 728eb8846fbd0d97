"""How ``torchvision::roi_align`` and ``torchvision::nms`` become ONNX nodes.

PyTorch counterpart: torchvision/ops/_register_onnx_ops.py (torchvision 0.28), which
registers the same two conversions with ``torch.onnx.register_custom_op_symbolic``;
ember's ``register_custom_op_symbolic`` (ember/onnx/registration.py) plays that part.
roi_align is registered for opset 16 and later only, where ``RoiAlign`` has
``coordinate_transformation_mode`` and so expresses both ``aligned=False``
(``output_half_pixel``) and ``aligned=True`` (``half_pixel``); torch also writes an
opset-11 form that cannot express ``aligned=True``.
"""

import sys

import numpy as np

_FLOAT = 1  # onnx.TensorProto.FLOAT


def _roi_align(g, node):
    """RoiAlign reads ``(K, 4)`` boxes and their batch indices apart: slice the roi
    tensor's first column off and cast it to int64."""
    input, rois = node.args
    k = node.kwargs
    rois_value = g.value(rois)
    column = g.op("Slice", rois_value, g.const(np.array([0], np.int64)), g.const(np.array([1], np.int64)),
                  g.const(np.array([1], np.int64)))
    batch_indices = g.op("Cast", g.op("Squeeze", column, g.const(np.array([1], np.int64))), to=7)  # int64
    boxes = g.op("Slice", rois_value, g.const(np.array([1], np.int64)), g.const(np.array([5], np.int64)),
                 g.const(np.array([1], np.int64)))
    return g.op("RoiAlign", g.value(input), boxes, batch_indices, mode="avg",
                output_height=k["pooled_height"], output_width=k["pooled_width"],
                sampling_ratio=max(k["sampling_ratio"], 0),  # ONNX's adaptive is 0, torchvision's any value <= 0
                spatial_scale=float(k["spatial_scale"]),
                coordinate_transformation_mode="half_pixel" if k["aligned"] else "output_half_pixel")


def _nms(g, node):
    """NonMaxSuppression works on batches and classes, ``(1, N, 4)`` and ``(1, 1, N)``, in
    float32; its ``(K, 3)`` result holds (batch, class, box): keep the box column."""
    boxes, scores = node.args
    axis0 = g.const(np.array([0], np.int64))
    boxes = g.op("Cast", g.op("Unsqueeze", g.value(boxes), axis0), to=_FLOAT)
    scores = g.op("Cast", g.op("Unsqueeze", g.value(scores), g.const(np.array([0, 1], np.int64))), to=_FLOAT)
    selected = g.op("NonMaxSuppression", boxes, scores, g.const(np.array([sys.maxsize], np.int64)),
                    g.const(np.array([node.kwargs["iou_threshold"]], np.float32)))
    column = g.op("Gather", selected, g.const(np.array([2], np.int64)), axis=1)
    return g.op("Squeeze", column, g.const(np.array([1], np.int64)))


def register():
    """Give ember.onnx.export the two conversions (called when ember_vision.ops is imported)."""
    from ember.onnx import register_custom_op_symbolic

    register_custom_op_symbolic("torchvision::roi_align", _roi_align, 16)
    register_custom_op_symbolic("torchvision::nms", _nms, 11)
