"""The neck: a feature pyramid, top-down (FPN), merging P4's context into P3.

PyTorch counterpart: torchvision/ops/feature_pyramid_network.py (v0.28), in role.
torchvision's FPN adds an upsampled coarse map to a 1x1 lateral of the fine one; YOLO
necks concatenate instead and let a CSP block mix the channels, which is what this does.
"""

import ember
import ember.nn as nn
from ember_zoo_yolo.layers import ConvBNAct, CSPBlock


class FPN(nn.Module):
    """``[P3, P4] -> [N3, N4]``, both with ``channels`` channels.

    N4 is a 1x1 reduction of P4; N3 mixes P3 with N4 upsampled 2x (nearest).
    """

    def __init__(self, in_channels, channels, depth=1):
        super().__init__()
        c3, c4 = in_channels
        self.reduce = ConvBNAct(c4, channels, 1)
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.merge = CSPBlock(c3 + channels, channels, depth)

    def forward(self, features):
        p3, p4 = features
        n4 = self.reduce(p4)
        n3 = self.merge(ember.cat([p3, self.upsample(n4)], dim=1))
        return [n3, n4]
