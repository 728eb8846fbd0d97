"""Helpers the RoI ops share: the ``(K, 5)`` roi layout and the argument checks.

PyTorch counterpart: torchvision/ops/_utils.py (``_cat``, ``convert_boxes_to_roi_format``,
``check_roi_boxes_shape``, ``_upcast``) (torchvision 0.28).
"""

import ember


def upcast(t):
    """``t`` in a type whose products do not overflow: float16/bfloat16 as float32, small
    integers as int32 (torchvision's ``_upcast``)."""
    if t.is_floating_point():
        return t if t.dtype in (ember.float32, ember.float64) else t.float()
    return t if t.dtype in (ember.int32, ember.int64) else t.int()


def _cat(tensors, dim=0):
    """``ember.cat``, without a copy for one tensor."""
    return tensors[0] if len(tensors) == 1 else ember.cat(tensors, dim)


def convert_boxes_to_roi_format(boxes):
    """A list of per-image ``(L_i, 4)`` boxes as one ``(K, 5)`` tensor whose first column
    is the image's index in the batch."""
    concat_boxes = _cat(list(boxes), dim=0)
    ids = _cat([ember.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return ember.cat([ids, concat_boxes], dim=1)


def check_roi_boxes_shape(boxes):
    """torchvision's assertion: a ``Tensor[K, 5]`` or a list of ``Tensor[L, 4]``."""
    if isinstance(boxes, (list, tuple)):
        for tensor in boxes:
            assert tensor.size(1) == 4, "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]"
    elif isinstance(boxes, ember.Tensor):
        assert boxes.size(1) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]"
    else:
        raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def as_rois(boxes):
    """Checked boxes in the ``(K, 5)`` layout the kernels read."""
    check_roi_boxes_shape(boxes)
    return boxes if isinstance(boxes, ember.Tensor) else convert_boxes_to_roi_format(boxes)


def pair(size):
    """``(h, w)`` from an int or a pair (torch's ``_pair``)."""
    return (size, size) if isinstance(size, int) else tuple(size)


def check_roi_inputs(input, rois):
    """The kernels' checks (RuntimeError, as TORCH_CHECK raises)."""
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise RuntimeError("rois must have shape as Tensor[K, 5]")
    if input.dtype != rois.dtype:
        raise RuntimeError("input should have the same type as rois")


def backward_with_second_output(backward_op):
    """The autograd formula of an op returning ``(output, index)`` (roi_pool's argmax, the
    position-sensitive ops' channel mapping): its backward op, fed the gradient, the
    saved rois, the index and the input's shape. The rois get no gradient."""
    def formula(ctx, grad, grad_index):
        input, rois = ctx.saved_inputs
        (index,) = ctx.saved_outputs_from(1)  # the output itself stays free to change in place
        batch_size, channels, height, width = input.shape
        return backward_op(grad, rois, index, batch_size=batch_size, channels=channels, height=height,
                           width=width, **ctx.attrs), None
    return formula
