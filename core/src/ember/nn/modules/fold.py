"""``Fold`` and ``Unfold``: col2im and im2col as layers.

PyTorch counterpart: torch/nn/modules/fold.py (v2.13).
"""

from ember.native.fold import fold, unfold
from ember.nn.modules.module import Module


class Fold(Module):
    """Sum sliding blocks ``(N, C*kh*kw, L)`` back into an image ``(N, C, *output_size)``.

    >>> import ember
    >>> ember.nn.Fold((4, 5), (2, 2))(ember.randn(1, 3 * 2 * 2, 12)).shape
    ember.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding blocks of ``(N, C, H, W)`` as columns ``(N, C*kh*kw, L)``.

    >>> import ember
    >>> ember.nn.Unfold((2, 3))(ember.randn(2, 5, 3, 4)).shape
    ember.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
