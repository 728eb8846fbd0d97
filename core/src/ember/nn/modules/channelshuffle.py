"""``ChannelShuffle``: the module of ``channel_shuffle``.

PyTorch counterpart: torch/nn/modules/channelshuffle.py (v2.13).
"""

from ember.native.shape.channel_shuffle import channel_shuffle
from ember.nn.modules.module import Module


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups: ``(N, C, *) -> (N, C, *)``.

    >>> import ember
    >>> ember.nn.ChannelShuffle(2)(ember.arange(4.).view(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
