"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``LPPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``,
``FractionalMaxPool2d/3d``.

PyTorch counterpart: torch/nn/modules/pooling.py (v2.13). Each layer stores its arguments as PyTorch does
(so ``extra_repr`` prints the same) and calls its functional form.
"""

from ember.native.pooling import fractional_max_pool, lp_pooling, max_unpooling
from ember.native.pooling import pooling as P
from ember.native.pooling import pooling3d as P3
from ember.nn.modules.module import Module


def _single(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows of ``kernel_size`` along the last dim of ``(N, C, L)``.

    >>> import ember
    >>> ember.nn.MaxPool1d(3, stride=2)(ember.randn(20, 16, 50)).shape
    ember.Size([20, 16, 24])
    """

    def forward(self, input):
        return P.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Max over ``kh x kw`` windows of ``(N, C, H, W)``; with ``return_indices`` also
    the argmax positions.

    >>> import ember
    >>> ember.nn.MaxPool2d(3, stride=2)(ember.randn(20, 16, 50, 32)).shape
    ember.Size([20, 16, 24, 15])
    """

    def forward(self, input):
        return P.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Max over ``kd x kh x kw`` windows of ``(N, C, D, H, W)``; with ``return_indices``
    also the argmax positions.

    >>> import ember
    >>> ember.nn.MaxPool3d(3, stride=2)(ember.randn(2, 4, 9, 10, 11)).shape
    ember.Size([2, 4, 4, 4, 5])
    """

    def forward(self, input):
        return P3.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                             ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """Mean over windows of ``kernel_size`` along the last dim of ``(N, C, L)``.

    >>> import ember
    >>> ember.nn.AvgPool1d(3, stride=2)(ember.ones(1, 1, 7)).tolist()
    [[[1.0, 1.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Mean over ``kh x kw`` windows of ``(N, C, H, W)`` (see
    :func:`ember.nn.functional.avg_pool2d` for padding and ``divisor_override``).

    >>> import ember
    >>> ember.nn.AvgPool2d(2)(ember.ones(1, 1, 4, 4)).shape
    ember.Size([1, 1, 2, 2])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return P.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """Mean over ``kd x kh x kw`` windows of ``(N, C, D, H, W)`` (see
    :func:`ember.nn.functional.avg_pool3d`).

    >>> import ember
    >>> ember.nn.AvgPool3d(2)(ember.ones(1, 1, 4, 4, 4)).shape
    ember.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input):
        return P3.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)


class _AdaptivePoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Average pooling of ``(N, C, L)`` to ``output_size`` positions."""

    def forward(self, input):
        return P.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Average pooling of ``(N, C, H, W)`` to ``output_size`` (an int, a pair, None
    keeps that size); ``AdaptiveAvgPool2d(1)`` is global average pooling.

    >>> import ember
    >>> ember.nn.AdaptiveAvgPool2d((5, 7))(ember.randn(1, 64, 8, 9)).shape
    ember.Size([1, 64, 5, 7])
    """

    def forward(self, input):
        return P.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Average pooling of ``(N, C, D, H, W)`` to ``output_size`` (an int, a triple, None
    keeps that size).

    >>> import ember
    >>> ember.nn.AdaptiveAvgPool3d((2, 3, None))(ember.randn(1, 4, 5, 6, 7)).shape
    ember.Size([1, 4, 2, 3, 7])
    """

    def forward(self, input):
        return P.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, L)`` to ``output_size`` positions."""

    def forward(self, input):
        return P.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, H, W)`` to ``output_size``; with ``return_indices`` also
    the argmax positions.

    >>> import ember
    >>> ember.nn.AdaptiveMaxPool2d((5, 7))(ember.randn(1, 64, 8, 9)).shape
    ember.Size([1, 64, 5, 7])
    """

    def forward(self, input):
        return P.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size``; with ``return_indices`` also
    the argmax positions.

    >>> import ember
    >>> ember.nn.AdaptiveMaxPool3d(2)(ember.randn(1, 4, 5, 6, 7)).shape
    ember.Size([1, 4, 2, 2, 2])
    """

    def forward(self, input):
        return P3.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``(sum x^p)^(1/p)`` over windows of the last dim of ``(N, C, L)``.

    >>> import ember
    >>> ember.nn.LPPool1d(2, 2)(ember.tensor([[[3., 4.]]])).tolist()
    [[[5.0]]]
    """

    def forward(self, input):
        return lp_pooling.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """``(sum x^p)^(1/p)`` over ``kh x kw`` windows of ``(N, C, H, W)``."""

    def forward(self, input):
        return lp_pooling.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """``(sum x^p)^(1/p)`` over ``kd x kh x kw`` windows of ``(N, C, D, H, W)``."""

    def forward(self, input):
        return lp_pooling.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    dims = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.dims)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self.dims)
        self.padding = _ntuple(padding, self.dims)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo :class:`MaxPool1d` given its indices; ``forward(input, indices, output_size=None)``."""

    def forward(self, input, indices, output_size=None):
        return max_unpooling.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo :class:`MaxPool2d` given its indices; ``forward(input, indices, output_size=None)``.

    >>> import ember
    >>> pool, unpool = ember.nn.MaxPool2d(2, return_indices=True), ember.nn.MaxUnpool2d(2)
    >>> unpool(*pool(ember.arange(16.).view(1, 1, 4, 4))).shape
    ember.Size([1, 1, 4, 4])
    """

    dims = 2

    def forward(self, input, indices, output_size=None):
        return max_unpooling.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Undo :class:`MaxPool3d` given its indices; ``forward(input, indices, output_size=None)``."""

    dims = 3

    def forward(self, input, indices, output_size=None):
        return max_unpooling.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _FractionalMaxPoolNd(Module):
    """Exactly one of ``output_size`` and ``output_ratio`` (each ratio in (0, 1));
    ``_random_samples``, when given, is a buffer that fixes the windows."""

    dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, self.dims) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self.dims) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """:func:`~ember.nn.functional.fractional_max_pool2d` as a layer.

    >>> import ember
    >>> ember.nn.FractionalMaxPool2d(2, output_size=3)(ember.randn(1, 4, 7, 7)).shape
    ember.Size([1, 4, 3, 3])
    """

    def forward(self, input):
        return fractional_max_pool.fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                                         self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """:func:`~ember.nn.functional.fractional_max_pool3d` as a layer; every kernel size must
    be positive."""

    dims = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        sizes = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
        if not all(k > 0 for k in sizes):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)

    def forward(self, input):
        return fractional_max_pool.fractional_max_pool3d(input, self.kernel_size, self.output_size, self.output_ratio,
                                                         self.return_indices, _random_samples=self._random_samples)


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
