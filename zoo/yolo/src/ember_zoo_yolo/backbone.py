"""The backbone: a stride-2 stem, three downsampling stages with CSP-lite blocks, and SPPF.

PyTorch counterpart: none (torchvision has no YOLO); in role, the ``body`` that
torchvision/models/detection/backbone_utils.py (v0.28) wraps around a ResNet to return
feature maps at several strides.

For a 64x64 image the stages give 16x16 (stride 4), 8x8 (stride 8, "P3") and 4x4
(stride 16, "P4"); the detector reads P3 and P4.
"""

import ember.nn as nn
from ember_zoo_yolo.layers import SPPF, ConvBNAct, CSPBlock


class Backbone(nn.Module):
    """``widths = (stem, stride 4, stride 8, stride 16)`` channels; ``depth`` bottlenecks per CSP block.

    ``forward(x)`` returns ``[P3, P4]``; ``out_channels`` is ``[widths[2], widths[3]]``.
    """

    strides = (8, 16)

    def __init__(self, widths=(16, 32, 64, 128), depth=1):
        super().__init__()
        stem, c4, c8, c16 = widths
        self.stem = ConvBNAct(3, stem, 3, stride=2)
        self.stage2 = nn.Sequential(ConvBNAct(stem, c4, 3, stride=2), CSPBlock(c4, c4, depth))
        self.stage3 = nn.Sequential(ConvBNAct(c4, c8, 3, stride=2), CSPBlock(c8, c8, depth))
        self.stage4 = nn.Sequential(ConvBNAct(c8, c16, 3, stride=2), CSPBlock(c16, c16, depth), SPPF(c16))
        self.out_channels = [c8, c16]

    def forward(self, x):
        p3 = self.stage3(self.stage2(self.stem(x)))
        return [p3, self.stage4(p3)]
