"""Coordinate attention: channel gates that keep one spatial direction, one gate per row
and one per column.

PyTorch counterpart: none in torch or torchvision; this module follows the authors'
reference implementation, houqb/CoordAttention ``coordatt.py`` (``CoordAtt``), and keeps
its attribute names (``pool_h``, ``pool_w``, ``conv1``, ``bn1``, ``act``, ``conv_h``,
``conv_w``), so its state dicts load. The reference's ``h_swish`` is
``x * relu6(x + 3) / 6``, which is ``nn.Hardswish``.

Paper: Hou, Zhou, Feng. Coordinate Attention for Efficient Mobile Network Design. CVPR
2021 (arXiv 2103.02907).

# NOTE [ Coordinate attention ]
# SE pools the whole H x W plane into one number per channel and so forgets where
# things are. Coordinate attention pools along one axis at a time: the mean of each
# row, (N, C, H, 1), and of each column, (N, C, 1, W). The two are laid end to end
# along the spatial axis, (N, C, H + W, 1), so that one shared 1x1 convolution, a
# BatchNorm and h-swish mix the channels of both (C -> mip = max(8, C // reduction));
# split back, each half gets its own 1x1 convolution to C channels and a sigmoid:
# a_h (N, C, H, 1) weighs rows, a_w (N, C, 1, W) columns, and the output is
# x * a_w * a_h. Their product, averaged over the channels, is the (N, 1, H, W) map
# that ``ember predict --explain`` draws for a CA model.
"""

import ember
from ember import nn


class CoordinateAttention(nn.Module):
    """``x * a_w * a_h`` with a gate per (channel, row) and per (channel, column).

    Args:
        inp: channels of ``x``.
        oup: channels of the gates (the reference's ResNets and MobileNets use ``inp``).
        reduction: the shared convolution has ``max(8, inp // reduction)`` channels.

    >>> import ember
    >>> ca = CoordinateAttention(16, 16)
    >>> ca.conv1.weight.shape, ca(ember.randn(2, 16, 8, 6)).shape
    (ember.Size([8, 16, 1, 1]), ember.Size([2, 16, 8, 6]))
    """

    def __init__(self, inp, oup, reduction=32):
        super().__init__()
        self.pool_h = nn.AdaptiveAvgPool2d((None, 1))
        self.pool_w = nn.AdaptiveAvgPool2d((1, None))
        mip = max(8, inp // reduction)
        self.conv1 = nn.Conv2d(inp, mip, kernel_size=1)
        self.bn1 = nn.BatchNorm2d(mip)
        self.act = nn.Hardswish()
        self.conv_h = nn.Conv2d(mip, oup, kernel_size=1)
        self.conv_w = nn.Conv2d(mip, oup, kernel_size=1)

    def attention_maps(self, x):
        """``(a_h, a_w)``: the row gates (N, C, H, 1), the column gates (N, C, 1, W)."""
        height, width = x.shape[2], x.shape[3]
        rows = self.pool_h(x)
        # (N, C, W, 1): the columns stood up as a second run of "rows"
        columns = self.pool_w(x).permute(0, 1, 3, 2)
        mixed = self.act(self.bn1(self.conv1(ember.cat([rows, columns], dim=2))))
        rows, columns = ember.split(mixed, [height, width], dim=2)
        a_h = self.conv_h(rows).sigmoid()
        a_w = self.conv_w(columns.permute(0, 1, 3, 2)).sigmoid()
        return a_h, a_w

    def forward(self, x):
        a_h, a_w = self.attention_maps(x)
        return x * a_w * a_h
