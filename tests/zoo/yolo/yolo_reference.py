"""Reference formulas written in torch for the yolo tests (shared by test_boxes.py and test_loss.py).

Written from the papers' definitions (GIoU: Rezatofighi et al. 2019; CIoU: Zheng et al.
2020), row by row, with the same eps placement as ember_zoo_yolo.boxes.
"""

import math

import torch


def torch_giou_loss(a, b, eps=1e-7):
    inter = ((torch.minimum(a[:, 2], b[:, 2]) - torch.maximum(a[:, 0], b[:, 0])).clamp(min=0)
             * (torch.minimum(a[:, 3], b[:, 3]) - torch.maximum(a[:, 1], b[:, 1])).clamp(min=0))
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    enclosing = ((torch.maximum(a[:, 2], b[:, 2]) - torch.minimum(a[:, 0], b[:, 0]))
                 * (torch.maximum(a[:, 3], b[:, 3]) - torch.minimum(a[:, 1], b[:, 1])))
    return 1 - (inter / (union + eps) - (enclosing - union) / (enclosing + eps))


def torch_ciou_loss(a, b, eps=1e-7):
    inter = ((torch.minimum(a[:, 2], b[:, 2]) - torch.maximum(a[:, 0], b[:, 0])).clamp(min=0)
             * (torch.minimum(a[:, 3], b[:, 3]) - torch.maximum(a[:, 1], b[:, 1])).clamp(min=0))
    wa, ha, wb, hb = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    iou = inter / (wa * ha + wb * hb - inter + eps)
    diagonal = ((torch.maximum(a[:, 2], b[:, 2]) - torch.minimum(a[:, 0], b[:, 0])) ** 2
                + (torch.maximum(a[:, 3], b[:, 3]) - torch.minimum(a[:, 1], b[:, 1])) ** 2 + eps)
    centre = (((a[:, 0] + a[:, 2]) - (b[:, 0] + b[:, 2])) ** 2 + ((a[:, 1] + a[:, 3]) - (b[:, 1] + b[:, 3])) ** 2) / 4
    v = 4 / math.pi ** 2 * (torch.atan(wb / hb) - torch.atan(wa / ha)) ** 2
    alpha = (v / (1 - iou + v + eps)).detach()
    return 1 - (iou - centre / diagonal - alpha * v)
