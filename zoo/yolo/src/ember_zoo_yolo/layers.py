"""The building blocks of the detector: Conv-BN-SiLU, the residual bottleneck, the CSP-lite block, SPPF.

PyTorch counterpart: none in PyTorch; torchvision/ops/misc.py's Conv2dNormActivation
(v0.28) is the nearest (conv, norm, activation in one Sequential-like unit). The CSP
idea is from CSPNet (Wang et al., 2019), spatial pyramid pooling from SPPNet (He et al.,
2014); the code is ember's own.
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


class SPPF(nn.Module):
    """Spatial pyramid pooling, fast form: three chained 5x5 stride-1 max pools, concatenated.

    Chaining gives receptive fields of 5, 9 and 13 cells for the cost of three small
    pools; on the coarsest map this lets every cell see (nearly) the whole image.
    ``cv1`` halves the channels first, ``cv2`` fuses the four maps back to ``channels``.
    """

    def __init__(self, channels, kernel_size=5):
        super().__init__()
        hidden = channels // 2
        self.cv1 = ConvBNAct(channels, hidden, 1)
        self.pool = nn.MaxPool2d(kernel_size, stride=1, padding=kernel_size // 2)
        self.cv2 = ConvBNAct(4 * hidden, channels, 1)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(ember.cat([x, y1, y2, self.pool(y2)], dim=1))
