"""The ``*_scatter`` ops: a copy of the input with ``src`` written where a view of it
would be (``select_scatter``, ``slice_scatter``, ``diagonal_scatter``,
``as_strided_scatter``).

PyTorch counterpart: ``select_scatter``, ``slice_scatter``, ``diagonal_scatter`` and
``as_strided_scatter`` in aten/src/ATen/native/TensorShape.cpp (v2.13).

They are the out-of-place form of "write into a view", which graphs without aliasing
need. Each is one rule, :func:`_scatter_into`: clone the input, take the view of the
clone, check that ``src`` has the view's shape and copy it in. The gradient comes from
autograd's in-place write into a view (NOTE [ Views and in-place writes ] in
ember/autograd/views.py): the input gets the gradient outside the view, ``src`` the
gradient inside it.
"""

from ember.native.copy import clone
from ember.native.shape import diagonal as _diagonal
from ember.native.shape import views
from ember.tensor import _wrap_dim


def _scatter_into(input, src, view, *args):
    """A clone of ``input`` whose ``view(clone, *args)`` holds ``src`` (cast to
    ``input``'s dtype)."""
    out = clone(input)
    piece = view(out, *args)
    if tuple(piece.shape) != tuple(src.shape):
        raise RuntimeError(_size_mismatch(src, piece))
    piece.copy_(src)
    return out


def _size_mismatch(src, piece):
    return (f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size = "
            f"{list(piece.shape)}")


def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src``.

    >>> import ember
    >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 0)
    tensor([[1., 1.],
            [0., 0.]])
    """
    return _scatter_into(input, src, views.select, dim, index)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``input[start:end:step]`` along ``dim`` replaced by ``src``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = _wrap_dim(dim, input.ndim)
    return _scatter_into(input, src, lambda t: views.SLICE(t, dim=dim, start=start, end=end, step=step))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    return _scatter_into(input, src, _diagonal.diagonal, offset, dim1, dim2)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``as_strided(size, stride, storage_offset)`` of its clone (the
    clone's memory, laid out as ``clone`` lays it out) replaced by ``src``."""
    return _scatter_into(input, src, views.as_strided, size, stride, storage_offset)
