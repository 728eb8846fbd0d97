"""The ``*_copy`` ops: a view op's result in memory of its own (``view_copy``,
``permute_copy``, ``expand_copy``, ``split_with_sizes_copy``, ...).

PyTorch counterpart: the ``*_copy`` operators of
aten/src/ATen/native/native_functions.yaml, whose CompositeExplicitAutograd kernels
(generated from the view ops, torchgen/gen_functionalization_type.py) call the view
op and clone its result contiguously (v2.13).

PyTorch has them so that graphs without aliasing (functionalization, export) can name
every view op; a program calls them as ``torch.permute_copy(x, dims)``. They share one
rule, :func:`_copy_of`: the view, then a contiguous clone, so the gradient is the view
op's backward followed by the clone's (the identity).
"""

from ember.memory_format import contiguous_format
from ember.native.copy import clone
from ember.native.shape import diagonal as _diagonal
from ember.native.shape import splitting, views


def _own(result):
    """A view's result (one tensor or a tuple of pieces) cloned contiguously."""
    if isinstance(result, (tuple, list)):
        return tuple(clone(piece, memory_format=contiguous_format) for piece in result)
    return clone(result, memory_format=contiguous_format)


def _copy_of(view, name):
    """``name``: ``view`` followed by a contiguous clone of what it returns."""
    def copy_op(input, *args, **kwargs):
        return _own(view(input, *args, **kwargs))

    copy_op.__name__ = copy_op.__qualname__ = name
    copy_op.__doc__ = f"``{view.__name__}``'s result in memory of its own (contiguous), as ``torch.{name}``."
    return copy_op


def _alias(input):
    return views.view(input, *input.shape)


def _expand(input, size, *, implicit=False):
    return views.expand(input, tuple(size))


def _view(input, *size):
    from ember.dtypes import dtype

    if len(size) == 1 and isinstance(size[0], dtype):
        return input.view(size[0])
    return views.view(input, *size)


def _split_with_sizes(input, split_sizes, dim=0):
    return splitting.split(input, list(split_sizes), dim)


alias_copy = _copy_of(_alias, "alias_copy")
as_strided_copy = _copy_of(views.as_strided, "as_strided_copy")
diagonal_copy = _copy_of(_diagonal.diagonal, "diagonal_copy")
expand_copy = _copy_of(_expand, "expand_copy")
narrow_copy = _copy_of(views.narrow, "narrow_copy")
permute_copy = _copy_of(views.permute, "permute_copy")
squeeze_copy = _copy_of(views.squeeze, "squeeze_copy")
t_copy = _copy_of(views.t, "t_copy")
transpose_copy = _copy_of(views.transpose, "transpose_copy")
unbind_copy = _copy_of(splitting.unbind, "unbind_copy")
unsqueeze_copy = _copy_of(views.unsqueeze, "unsqueeze_copy")
view_copy = _copy_of(_view, "view_copy")
split_with_sizes_copy = _copy_of(_split_with_sizes, "split_with_sizes_copy")
