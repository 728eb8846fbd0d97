"""``torchvision::nms``: greedy non-maximum suppression, the op behind ``nms`` and
``batched_nms`` (boxes.py).

PyTorch counterpart: torchvision/csrc/ops/nms.cpp (the schema) and
torchvision/csrc/ops/cpu/nms_kernel.cpp (the CPU kernel) (torchvision 0.28).

NOTE [ Greedy NMS, as torchvision's CPU kernel ]
Visit the boxes by decreasing score; keep a box that nothing has suppressed yet and
suppress every later box whose IoU with it is greater than ``iou_threshold``. The
result is the kept indices, int64, in the order visited. Three details make it agree
with torchvision to the index:
- the order is a stable descending sort of the scores, as ``scores.sort(0, True)`` on
  CPU: equal scores keep their input order, and NaN scores come first (torch sorts NaN
  above every number);
- areas, intersections and IoUs are computed in the boxes' dtype, with the C++
  ``std::max(0, w)`` (a NaN width counts as 0);
- the IoU is compared with the threshold in float64, as C++ compares a float with a
  double (a float32 comparison would round the threshold first and could flip an IoU
  equal to the rounded threshold).
Suppressing a box twice changes nothing, so the inner loop over later boxes is one
vectorised step per kept box.
"""

import numpy as np

from ember import library
from ember.dtypes import SCALAR_TYPE_NAMES, is_floating_array


def _check(boxes, scores):
    if boxes.ndim != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.ndim}D")
    if boxes.shape[1] != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.shape[1]}")
    if scores.ndim != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.ndim}D")
    if boxes.shape[0] != scores.shape[0]:
        raise RuntimeError("boxes and scores should have same number of elements in dimension 0, got "
                           f"{boxes.shape[0]} and {scores.shape[0]}")
    if not is_floating_array(boxes.dtype) or boxes.dtype.itemsize < 4:
        raise NotImplementedError(f'"nms_kernel" not implemented for \'{SCALAR_TYPE_NAMES[boxes.dtype.name]}\'')
    if boxes.dtype != scores.dtype:
        raise RuntimeError("dets should have the same type as scores")


def descending_order(scores):
    """Indices sorting ``scores`` high to low, stably, NaN first (torch's CPU sort)."""
    order = np.argsort(-scores, kind="stable")
    nan = np.isnan(scores[order])
    return np.concatenate([order[nan], order[~nan]])


def _positive_part(w):
    """``std::max(0, w)``: 0 unless ``0 < w`` (so NaN gives 0, where ``np.maximum`` gives NaN)."""
    return np.where(0 < w, w, 0).astype(w.dtype, copy=False)


def _larger(a, b):
    """``std::max(a, b)``, which returns ``a`` unless ``a < b``."""
    return np.where(a < b, b, a)


def _smaller(a, b):
    """``std::min(a, b)``, which returns ``a`` unless ``b < a``."""
    return np.where(b < a, b, a)


@library.custom_op("torchvision::nms")
def nms_op(xp, boxes, scores, *, iou_threshold):
    """Kept indices by greedy NMS (NOTE [ Greedy NMS, as torchvision's CPU kernel ])."""
    _check(boxes, scores)
    boxes, scores = np.asarray(boxes), np.asarray(scores)  # host code, as torchvision's
    if boxes.size == 0:
        return xp.zeros(0, dtype=np.int64)
    x1, y1, x2, y2 = (np.ascontiguousarray(boxes[:, k]) for k in range(4))
    areas = (x2 - x1) * (y2 - y1)
    order = descending_order(scores)
    suppressed = np.zeros(len(boxes), dtype=bool)
    keep = []
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        later = order[position + 1:]
        w = _positive_part(_smaller(x2[i], x2[later]) - _larger(x1[i], x1[later]))
        h = _positive_part(_smaller(y2[i], y2[later]) - _larger(y1[i], y1[later]))
        inter = w * h
        with np.errstate(invalid="ignore", divide="ignore"):
            iou = inter / (areas[i] + areas[later] - inter)
        suppressed[later[iou.astype(np.float64) > iou_threshold]] = True
    return xp.asarray(np.asarray(keep, dtype=np.int64))
