"""Ops that return several views: ``split split_with_sizes chunk tensor_split unbind``
and the "unsafe" forms ``unsafe_split unsafe_chunk``.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (v2.13).

Each piece is a view of the input, so writing into a piece writes into the input, as in
PyTorch. ``split``, ``chunk`` and ``unbind`` are multi-output view ops (one node,
``SplitBackward0``, ``SplitWithSizesBackward0`` or ``UnbindBackward0``, for all pieces):
as in PyTorch, their pieces may not be written in place while autograd records (NOTE
[ Views and in-place writes ] in ember/autograd/views.py). ``tensor_split`` is a chain
of ``narrow`` calls, so its pieces may.
"""

from ember.dispatcher import Op
from ember.native.shape.views import narrow
from ember.tensor import _wrap_dim


def _split_kernel(xp, a, dim, sizes):
    lead = (slice(None),) * dim
    pieces, start = [], 0
    for length in sizes:
        pieces.append(a[lead + (slice(start, start + length),)])
        start += length
    return tuple(pieces)


def _split_backward(ctx, *grads):
    # One cat of the pieces' gradients (a missing one counts as zeros).
    from ember.native.factory import zeros
    from ember.native.shape.shape import cat

    dim, sizes = ctx.attrs["dim"], ctx.attrs["sizes"]
    shape = ctx.input_meta[0][0]
    present = next(g for g in grads if g is not None)
    filled = [g if g is not None else zeros(shape[:dim] + (size,) + shape[dim + 1:], dtype=present.dtype,
                                            device=present.device)
              for g, size in zip(grads, sizes)]
    return (cat(filled, dim),)


SPLIT = Op("aten::split", _split_kernel, _split_backward, view=True, num_outputs=None)
SPLIT_WITH_SIZES = Op("aten::split_with_sizes", _split_kernel, _split_backward, view=True, num_outputs=None)


def split(input, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or pieces of
    the given sizes; each piece is a view."""
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        # An empty dim still gives one (empty) piece, as in PyTorch.
        sections = [step] * (size // step) + ([size % step] if size % step else []) if step and size else [0]
        return SPLIT(input, dim=dim, sizes=tuple(sections))
    sections = [int(s) for s in split_size_or_sections]
    if sum(sections) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={sections}")
    return SPLIT_WITH_SIZES(input, dim=dim, sizes=tuple(sections))


def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along ``dim`` (views): ``split`` with a list."""
    return split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """``split``'s pieces, each its own view (a narrow), so each may be written in place
    while autograd records, which PyTorch's "unsafe" forms allow."""
    pieces = split(input.detach(), split_size, dim)
    return _narrowed(input, dim, [piece.shape[_wrap_dim(dim, input.ndim)] for piece in pieces])


def unsafe_chunk(input, chunks, dim=0):
    """``chunk``'s pieces, each its own view (see :func:`unsafe_split`)."""
    pieces = chunk(input.detach(), chunks, dim)
    return _narrowed(input, dim, [piece.shape[_wrap_dim(dim, input.ndim)] for piece in pieces])


def _narrowed(input, dim, lengths):
    start, pieces = 0, []
    for length in lengths:
        pieces.append(narrow(input, dim, start, length))
        start += length
    return tuple(pieces)


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` pieces of ceil(size / chunks) along ``dim``."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if size == 0:  # PyTorch gives `chunks` empty pieces
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    """``n`` nearly equal pieces along ``dim``, or the pieces between the given indices
    (``input[:i0], input[i0:i1], ...``, clipped to the size; each piece is a view)."""
    from ember.tensor import Tensor

    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
        indices_or_sections = [sum(sizes[:i + 1]) for i in range(n - 1)]
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    pieces = []
    for start, end in zip(bounds, bounds[1:]):
        start = min(max(start if start >= 0 else start + size, 0), size)
        end = min(max(end if end >= 0 else end + size, start), size)
        pieces.append(narrow(input, dim, start, end - start))
    return tuple(pieces)


def _unbind_kernel(xp, a, dim):
    # The trailing Ellipsis keeps a 0-d piece a view (NumPy copies a full integer key out).
    lead = (slice(None),) * dim
    return tuple(a[lead + (i, Ellipsis)] for i in range(a.shape[dim]))


def _unbind_backward(ctx, *grads):
    # One stack of the pieces' gradients (a missing one counts as zeros), not one
    # zero-filled input-sized buffer per piece as n SelectBackwards would make.
    dim = ctx.attrs["dim"]
    shape, np_dtype = ctx.input_meta[0]
    piece_shape = shape[:dim] + shape[dim + 1:]
    present = next(g for g in grads if g is not None)
    from ember.native.factory import zeros
    from ember.native.shape.shape import stack

    filled = [g if g is not None else zeros(piece_shape, dtype=present.dtype, device=present.device)
              for g in grads]
    return (stack(filled, dim),)


UNBIND = Op("aten::unbind", _unbind_kernel, _unbind_backward, view=True, num_outputs=None)


def unbind(input, dim=0):
    """All slices along ``dim``, as a tuple of views."""
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] == 0:
        return ()
    return UNBIND(input, dim=dim)


def _directional_split(name, dim, min_ndim):
    # hsplit/vsplit/dsplit: tensor_split along a fixed dim, but a number of sections
    # must divide the size (NumPy's rule); hsplit of a 1-d tensor splits dim 0.
    def function(input, indices_or_sections):
        if input.ndim < min_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
                               f"tensor with {input.ndim} dimensions!")
        along = 0 if name == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, int):
            size = input.shape[along]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {along}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, along)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"Split into pieces along dim {dim} (``tensor_split`` with NumPy's rule that a number of "
                        f"sections divides the size); a tuple of views.")
    return function


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 0, 2)
dsplit = _directional_split("dsplit", 2, 3)
