"""The helpers of ``ember.fft``: ``fftfreq rfftfreq fftshift ifftshift``.

PyTorch counterpart: aten/src/ATen/native/SpectralOps.cpp (``fft_fftfreq``,
``fft_rfftfreq``, ``fft_fftshift``, ``fft_ifftshift``) (v2.13).
"""

from ember.native.factory import arange
from ember.native.shape.shape import roll


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequency of each output of an ``n``-point ``fft`` for samples ``d`` apart:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    >>> import ember
    >>> ember.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    k = arange(n, dtype=dtype, device=device)
    k = k - (k >= (n + 1) // 2) * n
    return (k / (d * n)).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The frequency of each output of an ``n``-point ``rfft``: ``[0, ..., n // 2] / (d * n)``.

    >>> import ember
    >>> ember.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    k = arange(n // 2 + 1, dtype=dtype, device=device)
    return (k / (d * n)).requires_grad_(requires_grad)


def _shift(input, dim, amount):
    if dim is None:
        dim = list(range(input.ndim))
    elif isinstance(dim, int):
        dim = [dim]
    if not dim:
        raise RuntimeError("`shifts` required")
    shifts = [amount(input.shape[d]) for d in dim]
    return roll(input, shifts, list(dim))


def fftshift(input, dim=None):
    """Roll the zero frequency to the middle of each of ``dim`` (every dim by default).

    >>> import ember
    >>> ember.fft.fftshift(ember.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    return _shift(input, dim, lambda n: (n + 1) // 2)
