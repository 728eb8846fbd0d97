"""The detection loss: IoU-aware BCE on class scores plus an IoU-family box loss on positives.

PyTorch counterpart: none in PyTorch; torchvision/models/detection/fcos.py's
``FCOSHead.compute_loss`` (v0.28) has the same parts (focal classification, GIoU box
regression), with ember's own choices below.

NOTE [ Detection loss ]
- Classification: binary cross-entropy with logits (ember-loss) over every anchor and
  class. A positive anchor's target for its class is the IoU of its (detached)
  predicted box with its ground truth, everything else targets 0; so the score learns
  to rank well-placed boxes first, which is what mAP rewards and why there is no
  separate objectness output (the "IoU-aware" score of VarifocalNet and later YOLOs).
- Box: ``1 - CIoU`` (or GIoU) between decoded predictions and ground truth on positive
  anchors.
- Normalisation: both sums are divided by the number of positive anchors in the batch
  (at least 1), so the loss scale does not depend on how many objects a batch holds.
  Gains: ``box_gain * box + cls_gain * cls``.
"""

import numpy as np

import ember
import ember.nn as nn
from ember_zoo_yolo.assign import assign_batch
from ember_zoo_yolo.boxes import complete_box_iou_loss, generalized_box_iou_loss

_BOX_LOSSES = {"ciou": complete_box_iou_loss, "giou": generalized_box_iou_loss}


def _row_iou(boxes1, boxes2):
    """IoU of matching rows, NumPy, for the class targets."""
    width = np.clip(np.minimum(boxes1[:, 2], boxes2[:, 2]) - np.maximum(boxes1[:, 0], boxes2[:, 0]), 0, None)
    height = np.clip(np.minimum(boxes1[:, 3], boxes2[:, 3]) - np.maximum(boxes1[:, 1], boxes2[:, 1]), 0, None)
    inter = width * height
    union = ((boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
             + (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1]) - inter)
    return inter / np.maximum(union, 1e-9)


class DetectionLoss(nn.Module):
    """``loss(logits, pred_boxes, targets, points, strides)`` -> ``(total, {"box": .., "cls": ..})``.

    ``logits`` (B, A, C) and ``pred_boxes`` (B, A, 4, decoded xyxy pixels) come from the
    model; ``targets`` are collated ``(batch_idx, cls, x1, y1, x2, y2)`` rows (ember or
    NumPy); ``points``/``strides`` are the model's anchors. See NOTE [ Detection loss ].
    """

    def __init__(self, box_loss="ciou", box_gain=5.0, cls_gain=1.0, radius=2.5):
        super().__init__()
        if box_loss not in _BOX_LOSSES:
            raise ValueError(f"box_loss must be one of {sorted(_BOX_LOSSES)}, but got {box_loss!r}")
        self.box_loss, self.box_gain, self.cls_gain, self.radius = box_loss, box_gain, cls_gain, radius
        self.bce = nn.BCEWithLogitsLoss(reduction="sum")

    def forward(self, logits, pred_boxes, targets, points, strides):
        batch_size, num_anchors, num_classes = logits.shape
        targets = (targets.numpy() if isinstance(targets, ember.Tensor)
                   else np.asarray(targets))
        positive, labels, gt_boxes = assign_batch(
            points.numpy(), strides.numpy().reshape(-1), targets.reshape(-1, 6),
            batch_size, self.radius)
        batch_index, anchor_index = np.nonzero(positive)
        num_positive = max(len(batch_index), 1)
        b, a = ember.from_numpy(batch_index), ember.from_numpy(anchor_index)

        chosen = pred_boxes[b, a]  # (P, 4), differentiable
        matched = gt_boxes[batch_index, anchor_index]
        box = _BOX_LOSSES[self.box_loss](
            chosen, ember.from_numpy(matched).to(chosen.dtype), reduction="sum")

        score_target = np.zeros((batch_size, num_anchors, num_classes), dtype=np.float32)
        iou = _row_iou(chosen.detach().numpy(), matched)
        score_target[batch_index, anchor_index, labels[batch_index, anchor_index]] = iou
        cls = self.bce(logits, ember.from_numpy(score_target).to(logits.dtype))

        box, cls = box / num_positive, cls / num_positive
        return (self.box_gain * box + self.cls_gain * cls,
                {"box": box.item(), "cls": cls.item()})
