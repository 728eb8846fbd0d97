"""The building blocks of the detector: Conv-BN-SiLU, the residual bottleneck, the CSP-lite block.

PyTorch counterpart: none in PyTorch; torchvision/ops/misc.py's Conv2dNormActivation
(v0.28) is the nearest (conv, norm, activation in one Sequential-like unit). The CSP
idea is from CSPNet (Wang et al., 2019); the code is ember's own.
"""

import ember
import ember.nn as nn


class ConvBNAct(nn.Module):
    """``SiLU(BatchNorm2d(Conv2d(x)))`` with "same" padding; ``stride=2`` halves the size.

    The convolution has no bias: the BatchNorm shift that follows would cancel it.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=kernel_size // 2, bias=False)
        # YOLO detectors train with a faster-moving, slightly larger-eps BatchNorm than PyTorch's defaults
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    """Two 3x3 ConvBNAct with a residual connection: ``x + f(x)``."""

    def __init__(self, channels):
        super().__init__()
        self.cv1 = ConvBNAct(channels, channels, 3)
        self.cv2 = ConvBNAct(channels, channels, 3)

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class CSPBlock(nn.Module):
    """Cross-stage partial block: half the channels go through ``depth`` bottlenecks, half skip them.

    ``cv1`` and ``cv2`` (1x1) make the two halves; a 1x1 ``cv3`` fuses their
    concatenation. The skipped half keeps gradients short and halves the 3x3 cost.
    """

    def __init__(self, in_channels, out_channels, depth=1):
        super().__init__()
        hidden = out_channels // 2
        self.cv1 = ConvBNAct(in_channels, hidden, 1)
        self.cv2 = ConvBNAct(in_channels, hidden, 1)
        self.blocks = nn.Sequential(*[Bottleneck(hidden) for _ in range(depth)])
        self.cv3 = ConvBNAct(2 * hidden, out_channels, 1)

    def forward(self, x):
        return self.cv3(ember.cat([self.blocks(self.cv1(x)), self.cv2(x)], dim=1))
