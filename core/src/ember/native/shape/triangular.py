"""Triangular parts of matrices: ``tril`` (on and below a diagonal) and ``triu`` (on and
above), with their in-place forms, and the indices of those triangles
(``tril_indices``, ``triu_indices``).

PyTorch counterpart: aten/src/ATen/native/TriangularOps.cpp, the ``tril``/``triu``
entries of derivatives.yaml and TensorFactories.cpp (``tril_indices``,
``triu_indices``) (v2.13).

Both work on the last two dims (the others are batch dims); ``diagonal`` shifts the
boundary: 0 is the main diagonal, > 0 above it, < 0 below. The gradient is the same
triangle of the incoming gradient.
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import NONE, Op
from ember.native.support._inplace import inplace


def _tril_backward(ctx, grad):
    return (TRIL(grad, diagonal=ctx.attrs["diagonal"]),)


def _triu_backward(ctx, grad):
    return (TRIU(grad, diagonal=ctx.attrs["diagonal"]),)


TRIL = Op("aten::tril", lambda xp, a, diagonal: xp.tril(a, diagonal), _tril_backward, promote=NONE, jvp=AUTO_LINEAR)
TRIU = Op("aten::triu", lambda xp, a, diagonal: xp.triu(a, diagonal), _triu_backward, promote=NONE, jvp=AUTO_LINEAR)


def _check(input, name):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    """The lower triangle: elements on and below diagonal ``diagonal``, zeros above.

    >>> import ember
    >>> ember.ones(3, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]])
    """
    _check(input, "tril")
    return TRIL(input, diagonal=int(diagonal))


def triu(input, diagonal=0):
    """The upper triangle: elements on and above diagonal ``diagonal``, zeros below.

    >>> import ember
    >>> ember.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    _check(input, "triu")
    return TRIU(input, diagonal=int(diagonal))


def tril_(input, diagonal=0):
    _check(input, "tril")
    return inplace(input, TRIL, (input,), {"diagonal": int(diagonal)})


def triu_(input, diagonal=0):
    _check(input, "triu")
    return inplace(input, TRIU, (input,), {"diagonal": int(diagonal)})


def _triangle_indices_host(row, col, offset, lower):
    # Row r of the lower triangle holds columns 0 .. r + offset (clipped to the
    # matrix); of the upper one, columns r + offset .. col - 1. Each row's count gives
    # its run of row numbers, and the column numbers count up within each run.
    r = np.arange(row, dtype=np.int64)
    first = np.zeros(row, dtype=np.int64) if lower else np.clip(r + offset, 0, col)
    last = np.clip(r + offset + 1, 0, col) if lower else np.full(row, col, dtype=np.int64)
    counts = np.maximum(last - first, 0)
    rows = np.repeat(r, counts)
    run_starts = np.repeat(np.cumsum(counts) - counts, counts)
    cols = np.arange(rows.size) - run_starts + np.repeat(first, counts)
    return np.stack([rows, cols])


def _triangle_indices(row, col, offset, dtype, device, lower):
    from ember import dtypes
    from ember.native.factory import _finish

    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dtype or dtypes.int64
    if dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented for "
                                  f"'{dtypes.SCALAR_TYPE_NAMES[dtype.name]}'")
    # made on the host, as the other factories (arange, linspace) make theirs
    host = _triangle_indices_host(int(row), int(col), int(offset), lower)
    return _finish(host.astype(dtype.np), dtype, device, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of a ``row`` x ``col`` matrix's lower triangle (on and
    below diagonal ``offset``), row by row, as a ``(2, N)`` tensor.

    >>> import ember
    >>> ember.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    return _triangle_indices(row, col, offset, dtype, device, lower=True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the upper triangle (on and above diagonal ``offset``).

    >>> import ember
    >>> ember.triu_indices(3, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    return _triangle_indices(row, col, offset, dtype, device, lower=False)
