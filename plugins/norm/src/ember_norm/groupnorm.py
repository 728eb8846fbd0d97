"""``GroupNorm``: normalization over groups of channels of each sample.

PyTorch counterpart: torch/nn/modules/normalization.py, class ``GroupNorm`` (v2.13).
"""

from ember.nn import Module
from ember_norm._affine import register_affine, reset_affine
from ember_norm.functional import group_norm


class GroupNorm(Module):
    """Split the C channels into ``num_groups`` groups, normalize each group of each
    sample, then scale and shift per channel.

    Args:
        num_groups: how many groups; must divide ``num_channels``.
        num_channels: C.
        eps: added to the variance.
        affine: learn per-channel ``weight`` (ones) and ``bias`` (zeros).
        bias: with ``affine``, whether to learn the bias.

    >>> import ember
    >>> ember.nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, affine, num_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self, self.affine)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


__all__ = ["GroupNorm"]
