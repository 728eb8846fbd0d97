"""CBAM, the Convolutional Block Attention Module: a channel gate, then a spatial gate.

PyTorch counterpart: none in torch or torchvision; this module follows the authors'
reference implementation, Jongchan/attention-module ``MODELS/cbam.py``.

Paper: Woo, Park, Lee, Kweon. CBAM: Convolutional Block Attention Module. ECCV 2018
(arXiv 1807.06521). The module tree and attribute names are the reference's
(``ChannelGate.mlp``, a ``Sequential`` of flatten, linear, ReLU, linear;
``SpatialGate.spatial.conv`` and ``.bn``), capitals included, so the authors' state
dicts load: ``layer1.0.cbam.ChannelGate.mlp.1.weight``.

Left out: the reference's extra pool types for the channel gate (``'lp'``, ``'lse'``);
the paper's, average and max, are the only ones.

# NOTE [ CBAM's two gates ]
# The channel gate is SE's with a second descriptor: the same MLP (shared weights) reads
# the per-channel mean AND the per-channel max, and the gate is the sigmoid of the sum
# of its two outputs. The spatial gate then asks "where": it compresses the channels of
# the channel-gated map into two planes, their max and their mean (in that order, as the
# reference's ``ChannelPool``), runs a 7x7 convolution (2 -> 1 channels, no bias) and a
# BatchNorm over them, and the sigmoid of that is one weight per pixel, shared by every
# channel. That (N, 1, H, W) map is what ``ember predict --explain`` draws for CBAM.
"""

import ember
from ember import nn


class ChannelGate(nn.Module):
    """``x * sigmoid(mlp(mean_hw(x)) + mlp(max_hw(x)))``, the MLP shared by both."""

    def __init__(self, gate_channels, reduction_ratio=16):
        super().__init__()
        hidden = gate_channels // reduction_ratio
        if hidden < 1:
            raise ValueError(f"CBAM's reduction_ratio ({reduction_ratio}) leaves no hidden unit for "
                             f"{gate_channels} channels")
        # (index 0 flattens (N, C, 1, 1) to (N, C): the reference's keys are mlp.1 and mlp.3)
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(gate_channels, hidden), nn.ReLU(),
                                 nn.Linear(hidden, gate_channels))

    def scale(self, x):
        """The gate, (N, C, 1, 1)."""
        average = self.mlp(x.mean(dim=(2, 3), keepdim=True))
        maximum = self.mlp(x.amax(dim=(2, 3), keepdim=True))
        return (average + maximum).sigmoid()[:, :, None, None]

    def forward(self, x):
        return x * self.scale(x)


class ConvNorm(nn.Module):
    """A convolution without bias and a BatchNorm (the reference's ``BasicConv`` with
    ``relu=False``; its norm's momentum is 0.01, not PyTorch's 0.1)."""

    def __init__(self, in_planes, out_planes, kernel_size, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(in_planes, out_planes, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_planes, eps=1e-5, momentum=0.01)

    def forward(self, x):
        return self.bn(self.conv(x))


class SpatialGate(nn.Module):
    """``x * sigmoid(bn(conv7x7([max_c(x), mean_c(x)])))``: one weight per pixel."""

    def __init__(self, kernel_size=7):
        super().__init__()
        self.spatial = ConvNorm(2, 1, kernel_size, padding=(kernel_size - 1) // 2)

    def attention_map(self, x):
        """The spatial weights, (N, 1, H, W) in (0, 1) (NOTE [ CBAM's two gates ])."""
        maximum, mean = x.amax(dim=1, keepdim=True), x.mean(dim=1, keepdim=True)
        return self.spatial(ember.cat([maximum, mean], dim=1)).sigmoid()

    def forward(self, x):
        return x * self.attention_map(x)


class CBAM(nn.Module):
    """The channel gate, then the spatial gate, on the same map.

    Args:
        gate_channels: channels of ``x``.
        reduction_ratio: the channel MLP's hidden width is ``gate_channels // reduction_ratio``.
        no_spatial: leave the spatial gate out (the reference's ablation switch).

    >>> import ember
    >>> cbam = CBAM(16, reduction_ratio=4)
    >>> list(cbam.ChannelGate.state_dict()), list(cbam.SpatialGate.state_dict())[:2]
    (['mlp.1.weight', 'mlp.1.bias', 'mlp.3.weight', 'mlp.3.bias'], ['spatial.conv.weight', 'spatial.bn.weight'])
    >>> cbam(ember.randn(2, 16, 8, 8)).shape
    ember.Size([2, 16, 8, 8])
    """

    def __init__(self, gate_channels, reduction_ratio=16, no_spatial=False):
        super().__init__()
        self.ChannelGate = ChannelGate(gate_channels, reduction_ratio)
        self.no_spatial = no_spatial
        if not no_spatial:
            self.SpatialGate = SpatialGate()

    def forward(self, x):
        x = self.ChannelGate(x)
        return x if self.no_spatial else self.SpatialGate(x)
