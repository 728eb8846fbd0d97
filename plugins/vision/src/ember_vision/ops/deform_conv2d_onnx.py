"""``torchvision::deform_conv2d`` in ONNX: one ``DeformConv`` node (opset 19 and later),
registered with ``ember.onnx.register_custom_op_symbolic`` when this module is imported.

PyTorch counterpart: torchvision/ops/_register_onnx_ops.py (``_deform_conv2d``, registered
for opset 19 by ``_register_custom_op``) (torchvision 0.28).

ONNX's DeformConv reads the offsets in torchvision's layout ((dy, dx) per tap, taps
row-major, per offset group) and the same optional mask, so the node takes the op's
tensors as they are; its inputs are ``X, W, offset, B, mask``, the last two optional.
"""

from ember.onnx import register_custom_op_symbolic

OPSET = 19  # the first with DeformConv


def deform_conv2d_symbolic(g, node):
    """The ``DeformConv`` node for a traced ``torchvision::deform_conv2d`` call."""
    input, weight, offset, mask, bias = node.args
    k = node.kwargs
    inputs = [g.value(input), g.value(weight), g.value(offset), g.value(bias),
              g.value(mask) if k["use_mask"] else ""]
    while inputs[-1] == "":  # ONNX leaves trailing optional inputs out
        inputs.pop()
    return g.op("DeformConv", *inputs,
                kernel_shape=list(g.meta(weight).shape[2:]),
                strides=[k["stride_h"], k["stride_w"]],
                pads=[k["pad_h"], k["pad_w"], k["pad_h"], k["pad_w"]],
                dilations=[k["dilation_h"], k["dilation_w"]],
                group=k["groups"], offset_group=k["offset_groups"])


register_custom_op_symbolic("torchvision::deform_conv2d", deform_conv2d_symbolic, OPSET)
