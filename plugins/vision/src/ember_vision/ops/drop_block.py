"""``drop_block2d``/``drop_block3d``: dropout of square (cubic) blocks of a feature map.

PyTorch counterpart: torchvision/ops/drop_block.py (torchvision 0.28).

NOTE [ DropBlock's seeds ]
DropBlock (Ghiasi et al., 2018) drops contiguous blocks, since a dropped pixel's
neighbours carry the same information. Block centres are drawn with probability
``gamma = p * size / (block_size ** d * valid positions)`` over the positions where a whole
block fits, so that about a fraction ``p`` of the map is dropped; a max pool of width
``block_size`` grows each centre into its block, and what survives is scaled by
``numel / (eps + kept)`` so the mean activation is unchanged.
"""

import ember
import ember.nn.functional as F
from ember import nn


def _check(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")


def drop_block2d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    """DropBlock on ``(N, C, H, W)`` (NOTE [ DropBlock's seeds ]); ``training=False`` or
    ``p == 0`` returns the input."""
    _check(p)
    if not training or p == 0.0:
        return input
    N, C, H, W = input.size()
    block_size = min(block_size, W, H)
    gamma = (p * H * W) / ((block_size ** 2) * ((H - block_size + 1) * (W - block_size + 1)))
    noise = ember.empty((N, C, H - block_size + 1, W - block_size + 1), dtype=input.dtype, device=input.device)
    noise.bernoulli_(gamma)
    noise = F.pad(noise, [block_size // 2] * 4, value=0)
    noise = F.max_pool2d(noise, stride=(1, 1), kernel_size=(block_size, block_size), padding=block_size // 2)
    return _apply(input, 1 - noise, eps, inplace)


def drop_block3d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    """DropBlock on ``(N, C, D, H, W)``, cubes of side ``block_size``."""
    _check(p)
    if not training or p == 0.0:
        return input
    N, C, D, H, W = input.size()
    block_size = min(block_size, D, H, W)
    gamma = (p * D * H * W) / ((block_size ** 3) * ((D - block_size + 1) * (H - block_size + 1) * (W - block_size + 1)))
    noise = ember.empty((N, C, D - block_size + 1, H - block_size + 1, W - block_size + 1), dtype=input.dtype,
                        device=input.device)
    noise.bernoulli_(gamma)
    noise = F.pad(noise, [block_size // 2] * 6, value=0)
    noise = F.max_pool3d(noise, stride=(1, 1, 1), kernel_size=(block_size,) * 3, padding=block_size // 2)
    return _apply(input, 1 - noise, eps, inplace)


def _apply(input, keep, eps, inplace):
    normalize_scale = keep.numel() / (eps + keep.sum())
    if inplace:
        return input.mul_(keep).mul_(normalize_scale)
    return input * keep * normalize_scale


class DropBlock2d(nn.Module):
    """:func:`drop_block2d` as a module (applied in training mode only)."""

    def __init__(self, p, block_size, inplace=False, eps=1e-06):
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, inplace={self.inplace})"


class DropBlock3d(DropBlock2d):
    """:func:`drop_block3d` as a module."""

    def forward(self, input):
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps, self.training)
