"""The Vandermonde matrix: ``vander`` (decreasing powers, 1-d input) and
``linalg.vander`` (increasing powers, batched input).

PyTorch counterpart: aten/src/ATen/native/LinearAlgebra.cpp (``vander``,
``linalg_vander``) (v2.13).

Both are compositions, as in PyTorch: a column of ones beside the running products
``cumprod`` of ``x`` repeated ``N - 1`` times, so the gradient comes from cumprod's.
Integer and bool inputs become int64.
"""

from ember import dtypes


def _increasing_powers(x, N):
    """``(..., n) -> (..., n, N)``: ``x**0, x**1, ..., x**(N - 1)``."""
    from ember.native.factory import ones
    from ember.native.shape.shape import cat
    from ember.native.softmax import cumprod

    if not x.dtype.is_floating_point:
        x = x.to(dtypes.promote_types(x.dtype, dtypes.int64))
    first = ones(*x.shape, 1, dtype=x.dtype, device=x.device)
    if N <= 1:
        return first[..., :N]
    column = x.unsqueeze(-1)
    return cat([first, cumprod(column.expand(*x.shape, N - 1), -1)], -1)


def vander(x, N=None, increasing=False):
    """The matrix whose columns are powers of the 1-d ``x``: ``x**(N-1), ..., x, 1``
    (``increasing=True``: ``1, x, ..., x**(N-1)``); ``N`` defaults to ``len(x)``.

    >>> import ember
    >>> ember.vander(ember.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    powers = _increasing_powers(x, N)
    return powers if increasing else powers.flip(-1)


def linalg_vander(x, *, N=None):
    """``ember.linalg.vander``: increasing powers ``1, x, ..., x**(N-1)`` of the last
    dim of ``x`` (leading dims are batch dims); ``N`` defaults to its size.

    >>> import ember
    >>> ember.linalg.vander(ember.tensor([1., 2.]), N=3)
    tensor([[1., 1., 1.],
            [1., 2., 4.]])
    """
    x = x.reshape(1) if x.ndim == 0 else x  # a 0-d x is one value, as in PyTorch
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _increasing_powers(x, N)
