"""Diagonals: ``diagonal`` (a view), ``diag_embed`` and ``diag`` (vector to matrix, or
matrix to a copy of its diagonal), and ``trace`` (the sum of the main diagonal).

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (``diagonal``,
``diag_embed``) and LinearAlgebra.cpp (``diag``, a composite of the two), ReduceOps.cpp (``trace``), with their
derivatives.yaml entries (v2.13).

``diagonal`` is a view op (it shares memory and the version counter with its input,
``_is_view()`` is True): the diagonal of dims ``dim1``/``dim2`` becomes the last dim,
with stride ``stride(dim1) + stride(dim2)``. ``offset`` > 0 takes a diagonal above the
main one, < 0 below.
"""

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import NONE, Op
from ember.native.shape.views import element_strides, restride
from ember.tensor import _wrap_dim


def _diagonal_kernel(xp, a, offset, dim1, dim2):
    start = [slice(None)] * a.ndim
    if offset >= 0:
        start[dim2] = slice(min(offset, a.shape[dim2]), None)
    else:
        start[dim1] = slice(min(-offset, a.shape[dim1]), None)
    corner = a[tuple(start)]  # a view whose first element is the diagonal's first
    length = max(0, min(corner.shape[dim1], corner.shape[dim2]))
    strides = element_strides(corner)
    kept = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = tuple(corner.shape[d] for d in kept) + (length,)
    return restride(xp, corner, shape, tuple(strides[d] for d in kept) + (strides[dim1] + strides[dim2],))


def _diagonal_backward(ctx, grad):
    (meta,) = ctx.input_meta
    attrs = ctx.attrs
    return (DIAGONAL_BACKWARD(grad, input_shape=meta[0], offset=attrs["offset"], dim1=attrs["dim1"],
                              dim2=attrs["dim2"]),)


def _diagonal_backward_kernel(xp, grad, input_shape, offset, dim1, dim2):
    out = xp.zeros(input_shape, dtype=grad.dtype)
    _diagonal_kernel(xp, out, offset, dim1, dim2)[...] = grad
    return out


def _diagonal_backward_backward(ctx, grad):
    attrs = ctx.attrs
    return (DIAGONAL(grad, offset=attrs["offset"], dim1=attrs["dim1"], dim2=attrs["dim2"]),)


DIAGONAL = Op("aten::diagonal", _diagonal_kernel, _diagonal_backward, promote=NONE, view=True)
DIAGONAL_BACKWARD = Op("aten::diagonal_backward", _diagonal_backward_kernel, _diagonal_backward_backward,
                       promote=NONE, jvp=AUTO_LINEAR)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims ``dim1`` and ``dim2`` as a view, appended as the last dim.

    >>> import ember
    >>> x = ember.arange(9.).reshape(3, 3)
    >>> x.diagonal(), x.diagonal(1), x.diagonal(-1)
    (tensor([0., 4., 8.]), tensor([1., 5.]), tensor([3., 7.]))
    """
    first, second = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAGONAL(input, offset=int(offset), dim1=first, dim2=second)


def _diag_embed_kernel(xp, a, offset, dim1, dim2):
    size = a.shape[-1] + abs(offset)
    shape = list(a.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, size)
    out = xp.zeros(tuple(shape), dtype=a.dtype)
    _diagonal_kernel(xp, out, offset, dim1, dim2)[...] = a
    return out


def _diag_embed_backward(ctx, grad):
    attrs = ctx.attrs
    return (DIAGONAL(grad, offset=attrs["offset"], dim1=attrs["dim1"], dim2=attrs["dim2"]),)


DIAG_EMBED = Op("aten::diag_embed", _diag_embed_kernel, _diag_embed_backward, promote=NONE, jvp=AUTO_LINEAR)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2`` of the output) whose ``offset`` diagonal is
    the last dim of ``input``; zero elsewhere."""
    ndim = input.ndim + 1
    first, second = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAG_EMBED(input, offset=int(offset), dim1=first, dim2=second)


def diag(input, diagonal=0):
    """A vector's square matrix with the vector on diagonal ``diagonal``, or a copy of a
    matrix's diagonal ``diagonal``.

    >>> import ember
    >>> ember.diag(ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return DIAGONAL(input, offset=int(diagonal), dim1=0, dim2=1).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")


def diagflat(input, offset=0):
    """The flattened input on diagonal ``offset`` of a square matrix (``diag`` of
    ``input.flatten()``, whatever the input's number of dims)."""
    return diag(input.reshape(-1), offset)


def trace(input):
    """The sum of a matrix's main diagonal (integers sum to int64, as ``sum`` does).

    >>> import ember
    >>> ember.arange(9).reshape(3, 3).trace()
    tensor(12)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return diagonal(input).sum()
