"""The decoupled head: per pyramid level, one branch for class scores and one for box distances.

PyTorch counterpart: none; torchvision/models/detection/fcos.py's FCOSHead (v0.28) is
the nearest (shared-weight towers, anchor-free distances). Here each level has its own
weights, as in YOLOX and later YOLOs, and there is no separate objectness: the class
scores are trained towards the IoU of the predicted box (see loss.py), so a class score
already says "object of this class, this well localised".
"""

import math

import ember
import ember.nn as nn
from ember_zoo_yolo.layers import ConvBNAct


class HeadLevel(nn.Module):
    """One level: ``(B, C_in, H, W) -> (B, H*W, num_classes)`` logits and
    ``(B, H*W, 4)`` raw distances."""

    def __init__(self, in_channels, channels, num_classes, prior_prob=0.01):
        super().__init__()
        self.stem = ConvBNAct(in_channels, channels, 1)
        self.cls_conv = ConvBNAct(channels, channels, 3)
        self.cls_pred = nn.Conv2d(channels, num_classes, 1)
        self.reg_conv = ConvBNAct(channels, channels, 3)
        self.reg_pred = nn.Conv2d(channels, 4, 1)
        # start every score near prior_prob: with thousands of background cells, a 0.5
        # start would make the first steps all about silencing the background
        # (RetinaNet's prior)
        nn.init.constant_(self.cls_pred.bias, -math.log((1 - prior_prob) / prior_prob))
        nn.init.zeros_(self.reg_pred.bias)

    def forward(self, x):
        x = self.stem(x)
        logits = self.cls_pred(self.cls_conv(x))
        distances = self.reg_pred(self.reg_conv(x))
        return _flatten(logits), _flatten(distances)


def _flatten(x):
    """(B, K, H, W) -> (B, H*W, K), cells in row-major order (the anchor order of decode.py)."""
    return x.flatten(2).transpose(1, 2)


class DecoupledHead(nn.Module):
    """One ``HeadLevel`` per level; outputs of all levels concatenated along the anchor axis."""

    def __init__(self, in_channels, channels, num_classes):
        super().__init__()
        self.levels = nn.ModuleList([HeadLevel(c, channels, num_classes) for c in in_channels])

    def forward(self, features):
        outputs = [level(x) for level, x in zip(self.levels, features)]
        return ember.cat([logits for logits, _ in outputs], dim=1), ember.cat([d for _, d in outputs], dim=1)
