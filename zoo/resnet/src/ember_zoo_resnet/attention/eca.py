"""Efficient Channel Attention (ECA): an SE gate whose bottleneck is one 1-D convolution
across neighbouring channels.

PyTorch counterpart: none in torch or torchvision; this module follows the authors'
reference implementation, BangguWu/ECANet ``models/eca_module.py`` (``eca_layer``), and
keeps its attribute names (``avg_pool``, ``conv``, ``sigmoid``), so its state dicts load.

Paper: Wang, Wu, Zhu, Li, Zuo, Hu. ECA-Net: Efficient Channel Attention for Deep
Convolutional Neural Networks. CVPR 2020 (arXiv 1910.03151).

# NOTE [ ECA's kernel size ]
# SE's two fully connected layers see every channel and reduce the width first; the
# paper's ablation finds the reduction hurts and that interactions between nearby
# channels suffice. So the pooled channel vector is read as a sequence of length C and
# convolved with one 1-D kernel of k weights (k parameters in all, no bias), padded to
# keep the length. k grows with the channel count through the paper's
# psi(C) = |log2(C) / gamma + b / gamma|_odd with gamma = 2, b = 1: the nearest odd
# integer at or above the truncated value (C = 16, 32, 64 -> 3; C = 512 -> 5). The
# reference code takes k as an argument (3 in its ResNets); ``kernel_size=None`` here
# computes it from C as the paper does.
"""

import math

from ember import nn


def eca_kernel_size(channels, gamma=2, b=1):
    """The paper's kernel size for ``channels`` (NOTE [ ECA's kernel size ])."""
    t = int(abs((math.log2(channels) + b) / gamma))
    return t if t % 2 else t + 1


class EfficientChannelAttention(nn.Module):
    """``x * sigmoid(conv1d(mean_hw(x) read along the channels))``.

    Args:
        channels: channels of ``x`` (C); sets the kernel size when ``kernel_size`` is None.
        kernel_size: odd size of the 1-D kernel, or None for ``eca_kernel_size(channels)``.
        gamma, b: the constants of the adaptive size (2 and 1 in the paper).

    >>> import ember
    >>> eca = EfficientChannelAttention(64)
    >>> eca.conv.weight.shape, eca(ember.randn(2, 64, 4, 4)).shape
    (ember.Size([1, 1, 3]), ember.Size([2, 64, 4, 4]))
    """

    def __init__(self, channels, kernel_size=None, gamma=2, b=1):
        super().__init__()
        if kernel_size is None:
            kernel_size = eca_kernel_size(channels, gamma, b)
        if kernel_size < 1 or kernel_size % 2 == 0:
            raise ValueError(f"ECA's kernel_size must be odd and positive (so the channels keep their count), "
                             f"but got {kernel_size}")
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv = nn.Conv1d(1, 1, kernel_size, padding=(kernel_size - 1) // 2, bias=False)
        self.sigmoid = nn.Sigmoid()

    def scale(self, x):
        """The gate, (N, C, 1, 1): the pooled (N, C, 1, 1) map as N sequences (N, 1, C),
        convolved along C, and back."""
        pooled = self.avg_pool(x).squeeze(-1).transpose(-1, -2)
        return self.sigmoid(self.conv(pooled).transpose(-1, -2).unsqueeze(-1))

    def forward(self, x):
        return x * self.scale(x)
