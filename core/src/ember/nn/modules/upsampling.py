"""``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``.

PyTorch counterpart: torch/nn/modules/upsampling.py (v2.13).
"""

from ember.native.upsampling import interpolate
from ember.nn.modules.module import Module


class Upsample(Module):
    """Resize ``(N, C, L)`` or ``(N, C, H, W)`` to ``size`` or by ``scale_factor``
    (modes as in :func:`ember.nn.functional.interpolate`).

    >>> import ember
    >>> ember.nn.Upsample(scale_factor=2, mode="bilinear")(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """:class:`Upsample` with ``mode='nearest'``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """:class:`Upsample` with ``mode='bilinear'`` and ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
