"""Power-average pooling: ``lp_pool1d``, ``lp_pool2d``, ``lp_pool3d``.

PyTorch counterpart: torch/nn/functional.py (``lp_pool1d/2d/3d``) (v2.13).

    out = (sum over the window of x^p) ^ (1/p)

computed as torch does, from average pooling: the mean of ``x^p`` times the window's
size, with negative means (odd ``p``) kept by ``sign * relu(abs)``. p = inf is max
pooling, p = 1 sum pooling. A composition of ember ops: autograd gives the gradient.
"""

from ember.native.pooling.pooling import avg_pool1d, avg_pool2d
from ember.native.pooling.pooling3d import avg_pool3d


def _root(pooled, window, norm_type):
    from ember.native.pointwise.unary import relu

    return (pooled.sign() * relu(pooled.abs())).mul(window).pow(1.0 / norm_type)


def _sizes(kernel_size, dims):
    return (kernel_size,) * dims if isinstance(kernel_size, int) else tuple(kernel_size)


def _window(kernel_size, dims):
    count = 1
    for k in _sizes(kernel_size, dims):
        count *= k
    return count


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum x^p)^(1/p)`` over windows of the last dim of ``(N, C, L)`` or ``(C, L)``.

    >>> import ember
    >>> ember.nn.functional.lp_pool1d(ember.tensor([[[3., 4.]]]), 2, 2).tolist()
    [[[5.0]]]
    """
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, _window(kernel_size, 1), norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum x^p)^(1/p)`` over ``kh x kw`` windows of ``(N, C, H, W)`` or ``(C, H, W)``."""
    pooled = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, _window(kernel_size, 2), norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum x^p)^(1/p)`` over ``kd x kh x kw`` windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    pooled = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, _window(kernel_size, 3), norm_type)
