"""``PixelShuffle`` and ``PixelUnshuffle``: the modules of ``pixel_shuffle`` and
``pixel_unshuffle``.

PyTorch counterpart: torch/nn/modules/pixelshuffle.py (v2.13).
"""

from ember.native.shape.pixel_shuffle import pixel_shuffle, pixel_unshuffle
from ember.nn.modules.module import Module


class PixelShuffle(Module):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)`` with ``r = upscale_factor``.

    >>> import ember
    >>> ember.nn.PixelShuffle(3)(ember.randn(1, 9, 4, 4)).shape
    ember.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)`` with ``r = downscale_factor``.

    >>> import ember
    >>> ember.nn.PixelUnshuffle(3)(ember.randn(1, 1, 12, 12)).shape
    ember.Size([1, 9, 4, 4])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
