"""Shape ops that make new memory: ``cat stack hstack vstack dstack column_stack flip
roll rot90 repeat tile repeat_interleave``, the ``atleast_1d/2d/3d`` reshapes, and
broadcasting (``broadcast_to broadcast_shapes broadcast_tensors``). The view ops are in views.py and splitting.py.

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp (cat, stack, repeat,
broadcast_to, broadcast_tensors) and TensorTransformations.cpp (flip, roll, rot90) (v2.13).
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import Op
from ember.native.shape.views import _sizes, expand
from ember.tensor import _wrap_dim

# --- broadcasting ---------------------------------------------------------------


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def broadcast_shapes(*shapes):
    """The shape that all ``shapes`` broadcast to, or PyTorch's error; an int ``n``
    stands for the shape ``(n,)``."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    if any(size < 0 for shape in shapes for size in shape):
        raise ValueError("Attempting to broadcast a dimension with negative length!")
    ndim = 0 if not shapes else max(len(s) for s in shapes)
    result = [1] * ndim
    for index, shape in enumerate(shapes):
        for i, s in enumerate(shape):
            j = ndim - len(shape) + i
            if result[j] == 1:
                result[j] = s
            elif s != 1 and s != result[j]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s} at {j - ndim}! Mismatching "
                                   f"argument at index {index} had {shape}; but expected shape should be "
                                   f"broadcastable to {result}")
    from ember.tensor import Size

    return Size(result)


def broadcast_tensors(*tensors):
    from ember.native.pointwise.binary import broadcast_error  # (the pointwise family's wording, as torch's)

    mismatch = broadcast_error(*tensors)
    if mismatch is not None:
        raise mismatch
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


# --- ops that make new memory ---------------------------------------------------


def _cat_kernel(xp, *arrays, dim, lengths=None):
    return xp.concatenate(arrays, axis=dim)


def _cat_backward(ctx, grad):
    dim = ctx.attrs["dim"]
    out, start = [], 0
    for needed in ctx.needs_input_grad:
        length = ctx.attrs["lengths"][len(out)]
        out.append(grad.narrow(dim, start, length) if needed else None)
        start += length
    return tuple(out)


CAT = Op("aten::cat", _cat_kernel, _cat_backward, promote="default", jvp=AUTO_LINEAR)


def cat(tensors, dim=0):
    """Join tensors along an existing dim; dtypes promote, shapes must match elsewhere.
    1-d empty tensors are skipped, as in PyTorch."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    ref = parts[0]
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(parts):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for d in range(ref.ndim):
            if d != dim and t.shape[d] != ref.shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size "
                                   f"{ref.shape[d]} but got size {t.shape[d]} for tensor number {i} in the list.")
    return CAT(*parts, dim=dim, lengths=tuple(t.shape[dim] for t in parts))


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join tensors of one shape along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    dim = _wrap_dim(dim, tensors[0].ndim + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def _at_least(expand):
    # torch's form: one tensor gives a tensor, several (or one list of them) a tuple.
    def function(*tensors):
        if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)):
            return expand(tensors[0])
        if len(tensors) == 1:
            tensors = tensors[0]
        return tuple(expand(t) for t in tensors)
    return function


def _expand_1d(input):
    return input.reshape(1) if input.ndim == 0 else input


def _expand_2d(input):
    return input.reshape(1, -1) if input.ndim < 2 else input


def _expand_3d(input):
    # 0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1), as NumPy's atleast_3d.
    if input.ndim == 0:
        return input.reshape(1, 1, 1)
    if input.ndim == 1:
        return input.reshape(1, -1, 1)
    return input.unsqueeze(-1) if input.ndim == 2 else input


atleast_1d = _at_least(_expand_1d)
atleast_1d.__doc__ = "Each tensor with at least 1 dim (a 0-d tensor becomes shape (1,))."
atleast_2d = _at_least(_expand_2d)
atleast_2d.__doc__ = "Each tensor with at least 2 dims (new dims in front)."
atleast_3d = _at_least(_expand_3d)
atleast_3d.__doc__ = """Each tensor with at least 3 dims: ``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` becomes
``(m, n, 1)``.

>>> import ember
>>> ember.atleast_3d(ember.ones(2, 3)).shape
ember.Size([2, 3, 1])
"""


def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-d tensors); 0-d tensors count as 1-d."""
    tensors = [_expand_1d(t) for t in tensors]
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0, after making 0-d and 1-d tensors rows."""
    tensors = [_expand_2d(t) for t in tensors]
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(tensors, 0)


def dstack(tensors):
    """Join along dim 2 (depth), after ``atleast_3d``.

    >>> import ember
    >>> ember.dstack([ember.ones(2), ember.zeros(2)]).shape
    ember.Size([1, 2, 2])
    """
    tensors = [_expand_3d(t) for t in tensors]
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(tensors, 2)


def column_stack(tensors):
    """Join along dim 1, 0-d and 1-d tensors first made columns ``(n, 1)``.

    >>> import ember
    >>> ember.column_stack([ember.ones(3), ember.zeros(3, 2)]).shape
    ember.Size([3, 3])
    """
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors], 1)


FLIP = Op("aten::flip", lambda xp, a, dims: xp.flip(a, dims).copy(), lambda ctx, g: (g.flip(ctx.attrs["dims"]),),
          jvp=AUTO_LINEAR)


def flip(input, dims):
    """Reverse the order along ``dims`` (a copy: ember, like PyTorch, has no negative strides)."""
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    return FLIP(input, dims=dims if input.ndim else ())  # a 0-d tensor's one "dim" is nothing to reverse


def fliplr(input):
    return flip(input, 1)


def flipud(input):
    return flip(input, 0)


def _roll_kernel(xp, a, shifts, dims):
    return xp.roll(a, shifts, dims)


def _roll_backward(ctx, grad):
    shifts, dims = ctx.attrs["shifts"], ctx.attrs["dims"]
    if dims is None:
        return (grad.flatten().roll(tuple(-s for s in shifts)).reshape(ctx.input_meta[0][0]),)
    return (grad.roll(tuple(-s for s in shifts), dims),)


ROLL = Op("aten::roll", _roll_kernel, _roll_backward, jvp=AUTO_LINEAR)


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` with wrap-around (flattened when dims is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        return ROLL(input.flatten(), shifts=shifts, dims=0).reshape(input.shape) if input.ndim else input.clone()
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return ROLL(input, shifts=shifts, dims=tuple(_wrap_dim(d, input.ndim) for d in dims))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim
    towards the second (a flip and a transpose; ``k`` may be negative).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = dims
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    d0, d1 = _wrap_dim(d0, input.ndim), _wrap_dim(d1, input.ndim)
    k = k % 4
    if k == 1:
        return flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(input, [d0]).transpose(d0, d1)
    return input.clone()


def _repeat_kernel(xp, a, sizes):
    return xp.tile(a, sizes)  # NumPy's tile is PyTorch's repeat when len(sizes) >= ndim


def _repeat_backward(ctx, grad):
    # Each input element was copied once per tile: split every dim into (tiles, size)
    # and sum over the tiles.
    sizes = ctx.attrs["sizes"]
    in_shape = (1,) * (len(sizes) - len(ctx.input_meta[0][0])) + tuple(ctx.input_meta[0][0])
    split_shape = []
    for r, s in zip(sizes, in_shape):
        split_shape += [r, s]
    summed = grad.reshape(tuple(split_shape)).sum(tuple(range(0, 2 * len(sizes), 2))) if grad.numel() \
        else grad.new_zeros(in_shape)
    return (summed.reshape(ctx.input_meta[0][0]),)


REPEAT = Op("aten::repeat", _repeat_kernel, _repeat_backward, jvp=AUTO_LINEAR)


def repeat(input, *sizes):
    """Tile the tensor ``sizes[i]`` times along each dim (new memory)."""
    sizes = _sizes(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    return REPEAT(input, sizes=sizes)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; ``repeats``
    is an int or a 1-d tensor with one count per element. ``repeat_interleave(counts)``
    alone gives ``arange(len(counts))`` repeated by ``counts``."""
    from ember.native.factory import arange
    from ember.native.factory import tensor as make_tensor
    from ember.tensor import Tensor

    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = input
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts.reshape(-1),
                                 output_size=output_size)
    if dim is None:
        input, dim = input.flatten(), 0
    dim = _wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        x = input.unsqueeze(dim + 1)
        shape = list(x.shape)
        shape[dim + 1] = repeats
        new_shape = list(input.shape)
        new_shape[dim] *= repeats
        return x.expand(tuple(shape)).reshape(tuple(new_shape))
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype.name not in ("int64", "int32"):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if repeats.shape[0] != input.shape[dim]:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {input.shape[dim]}")
    counts = repeats._host()
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    import numpy as np

    # The counts are data-dependent, so the index is built on the host (as PyTorch
    # syncs to learn the output size).
    index = make_tensor(np.repeat(np.arange(len(counts), dtype=np.int64), counts), device=input.device)
    return input.index_select(dim, index)
