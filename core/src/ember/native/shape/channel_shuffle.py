"""``channel_shuffle``: interleave the channels of ``groups`` groups (ShuffleNet's mixing
of grouped convolutions' outputs).

PyTorch counterpart: aten/src/ATen/native/ChanelShuffle.cpp (v2.13). A reshape to
``(N, groups, C/groups, *)``, a swap of those two dims and a reshape back, so autograd
needs nothing of its own.
"""


def channel_shuffle(input, groups):
    """``(N, C, *) -> (N, C, *)`` with channel ``g * (C/groups) + k`` moved to ``k * groups + g``.

    >>> import ember
    >>> ember.nn.functional.channel_shuffle(ember.arange(6.).view(1, 6, 1), 2).flatten().tolist()
    [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"[{', '.join(map(str, input.shape))}]")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    channels = input.shape[1]
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and {groups} "
                           "groups.")
    batch, rest = input.shape[0], tuple(input.shape[2:])
    grouped = input.reshape((batch, groups, channels // groups) + rest)
    return grouped.transpose(1, 2).reshape(tuple(input.shape))
