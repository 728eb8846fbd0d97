"""Padding layers: ``ZeroPad1d/2d/3d``, ``ConstantPad1d/2d/3d``, ``ReflectionPad1d/2d/3d``,
``ReplicationPad1d/2d/3d``, ``CircularPad1d/2d/3d``.

PyTorch counterpart: torch/nn/modules/padding.py (v2.13). An int pads every side by the
same amount; a tuple is ``F.pad``'s list (last dim first).
"""

from ember.native.padding import pad
from ember.nn.modules.module import Module


def _sides(padding, dims):
    return (padding,) * (2 * dims) if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, self.dims)

    def forward(self, input):
        return pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``.

    >>> import ember
    >>> ember.nn.ConstantPad1d(2, 3.5)(ember.zeros(1, 2)).tolist()
    [[3.5, 3.5, 0.0, 0.0, 3.5, 3.5]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros.

    >>> import ember
    >>> ember.nn.ZeroPad2d((1, 1, 2, 0))(ember.ones(1, 1, 3, 3)).shape
    ember.Size([1, 1, 5, 5])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros.

    >>> import ember
    >>> ember.nn.ZeroPad3d((1, 1, 2, 0, 0, 1))(ember.ones(1, 1, 3, 3, 3)).shape
    ember.Size([1, 1, 4, 5, 5])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Mirror the last dim at its edges (the edge itself not repeated)."""

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Mirror the last two dims at their edges."""

    dims = 2


class ReflectionPad3d(ReflectionPad1d):
    """Mirror the last three dims at their edges."""

    dims = 3


class ReplicationPad1d(_PadNd):
    """Repeat the edge values of the last dim."""

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Repeat the edge values of the last two dims."""

    dims = 2


class ReplicationPad3d(ReplicationPad1d):
    """Repeat the edge values of the last three dims."""

    dims = 3


class CircularPad1d(_PadNd):
    """Wrap the last dim around."""

    mode = "circular"


class CircularPad2d(CircularPad1d):
    """Wrap the last two dims around."""

    dims = 2


class CircularPad3d(CircularPad1d):
    """Wrap the last three dims around."""

    dims = 3
