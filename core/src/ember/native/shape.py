"""Shape and view ops: ``view reshape permute transpose expand squeeze unsqueeze
flatten unflatten narrow movedim as_strided`` (views) and ``cat stack flip roll repeat
tile split chunk unbind`` (new memory, or tuples of views).

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp and
aten/src/ATen/TensorUtils.cpp (``computeStride``: when a view is possible) (v2.13).

A view op returns an array over the input's memory (the dispatcher then records the
base and shares the version counter). The backward of a view op is the inverse view
or a reduction, written with ember ops.
"""

from ember.dispatcher import NONE, Op
from ember.tensor import _wrap_dim


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)) or len(size) == 1 and hasattr(size[0], "__iter__"):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def infer_size(shape, numel):
    """Replace a single -1 in ``shape`` so the product is ``numel``; PyTorch's errors."""
    shape = list(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _view_kernel(xp, a, shape):
    out = a.view()
    try:
        out.shape = shape  # NumPy refuses exactly when no strides describe the new shape
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return out


def _reshape_backward(ctx, grad):
    (meta,) = ctx.input_meta
    return (grad.reshape(meta[0]),)


VIEW = Op("aten::view", _view_kernel, _reshape_backward, view=True)
RESHAPE = Op("aten::reshape", lambda xp, a, shape: a.reshape(shape), _reshape_backward, view=True,
             backward_name="ViewBackward0")


def view(input, *shape):
    """The same memory seen with another shape; raises if the strides do not allow it.
    ``view(dtype)`` reinterprets the bytes as another dtype."""
    from ember import dtypes

    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        return _view_dtype(input, shape[0])
    return VIEW(input, shape=infer_size(_sizes(shape), input.numel()))


def _view_dtype(input, dtype):
    from ember.tensor import _make_tensor

    if input.element_size() != dtype.itemsize and input.ndim == 0:
        raise RuntimeError("self.dim() cannot be 0 to view dtype with a different element size")
    out = _make_tensor(input._data.view(dtype.np), input._device)
    out._base = input._base or input
    out._version = input._version
    return out


def reshape(input, *shape):
    """A view when the strides allow one, else a copy (``torch.reshape``)."""
    return RESHAPE(input, shape=infer_size(_sizes(shape), input.numel()))


def view_as(input, other):
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    return reshape(input, tuple(other.shape))


def _permute_backward(ctx, grad):
    dims = ctx.attrs["dims"]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return (grad.permute(*inverse),)


PERMUTE = Op("aten::permute", lambda xp, a, dims: a.transpose(dims), _permute_backward, view=True)


def permute(input, *dims):
    """Reorder the dimensions (a view)."""
    dims = tuple(_wrap_dim(d, input.ndim) for d in _sizes(dims))
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return PERMUTE(input, dims=dims)


def _transpose_kernel(xp, a, dim0, dim1):
    return xp.swapaxes(a, dim0, dim1) if a.ndim else a.view()


TRANSPOSE = Op("aten::transpose", _transpose_kernel,
               lambda ctx, g: (g.transpose(ctx.attrs["dim0"], ctx.attrs["dim1"]),), view=True)


def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    n = input.ndim
    return TRANSPOSE(input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    """Transpose a matrix; a 0-d or 1-d tensor is returned as it is (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else TRANSPOSE(input, dim0=0, dim1=0)


def adjoint(input):
    return transpose(input, -2, -1)


def _expand_kernel(xp, a, shape):
    return xp.broadcast_to(a, shape)


EXPAND = Op("aten::expand", _expand_kernel, lambda ctx, g: (g,), view=True)


def expand(input, *sizes):
    """Broadcast to a larger shape without copying; -1 keeps a dimension."""
    sizes = _sizes(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(f"expand({input.type()}{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    shape = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            shape.append(s)
            continue
        have = input.shape[i - lead]
        if s == -1:
            s = have
        if have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
        shape.append(s)
    shape = tuple(shape)
    if shape == tuple(input.shape):
        return EXPAND(input, shape=shape)
    return EXPAND(input, shape=shape)


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def broadcast_shapes(*shapes):
    """The shape that all ``shapes`` broadcast to, or PyTorch's error."""
    ndim = 0 if not shapes else max(len(s) for s in shapes)
    result = [1] * ndim
    for shape in shapes:
        for i, s in enumerate(shape):
            j = ndim - len(shape) + i
            if result[j] == 1:
                result[j] = s
            elif s != 1 and s != result[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   f"between arg 0 and arg 1.")
    from ember.tensor import Size

    return Size(result)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


UNSQUEEZE = Op("aten::unsqueeze", lambda xp, a, dim: xp.expand_dims(a, dim),
               lambda ctx, g: (g.squeeze(ctx.attrs["dim"]),), view=True)


def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view)."""
    return UNSQUEEZE(input, dim=_wrap_dim(dim, input.ndim + 1))


def _squeeze_kernel(xp, a, dims):
    dims = tuple(d for d in dims if a.shape[d] == 1)
    return a.squeeze(dims) if dims else a.view()


SQUEEZE = Op("aten::squeeze", _squeeze_kernel, _reshape_backward, view=True)


def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim`` that are 1)."""
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, int):
        dims = (_wrap_dim(dim, input.ndim),) if input.ndim else ()
    else:
        dims = tuple(_wrap_dim(d, input.ndim) for d in dim) if input.ndim else ()
    return SQUEEZE(input, dims=dims)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible)."""
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = tuple(input.shape)
    merged = 1
    for s in shape[start:end + 1]:
        merged *= s
    return reshape(input, shape[:start] + (merged,) + shape[end + 1:])


def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    dim = _wrap_dim(dim, input.ndim)
    sizes = infer_size(tuple(sizes), input.shape[dim])
    return view(input, tuple(input.shape[:dim]) + sizes + tuple(input.shape[dim + 1:])) \
        if input.is_contiguous() else reshape(input, tuple(input.shape[:dim]) + sizes + tuple(input.shape[dim + 1:]))


def _slice_kernel(xp, a, dim, start, end, step):
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


def _slice_backward(ctx, grad):
    from ember.native.factory import zeros

    (meta,) = ctx.input_meta
    dim, start, end, step = (ctx.attrs[k] for k in ("dim", "start", "end", "step"))
    full = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    return (SLICE_SCATTER(full, grad, dim=dim, start=start, end=end, step=step),)


SLICE = Op("aten::slice", _slice_kernel, _slice_backward, view=True)


def _slice_scatter_kernel(xp, a, src, dim, start, end, step):
    out = a.copy()
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def _slice_scatter_backward(ctx, grad):
    dim, start, end, step = (ctx.attrs[k] for k in ("dim", "start", "end", "step"))
    need_a, need_src = ctx.needs_input_grad
    grad_a = SLICE_SCATTER(grad, grad.narrow(dim, 0, 0).new_zeros(()).expand_as(SLICE(grad, dim=dim, start=start, end=end, step=step)),
                           dim=dim, start=start, end=end, step=step) if need_a else None
    grad_src = SLICE(grad, dim=dim, start=start, end=end, step=step) if need_src else None
    return grad_a, grad_src


SLICE_SCATTER = Op("aten::slice_scatter", _slice_scatter_kernel, _slice_scatter_backward, promote="default")


def narrow(input, dim, start, length):
    """``length`` elements of ``dim`` from ``start`` (a view)."""
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if hasattr(start, "item"):
        start = int(start.item())
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return SLICE(input, dim=dim, start=start, end=start + length, step=1)


def movedim(input, source, destination):
    """Move dims from ``source`` to ``destination`` positions (a view)."""
    n = input.ndim
    src = [_wrap_dim(d, n) for d in ((source,) if isinstance(source, int) else source)]
    dst = [_wrap_dim(d, n) for d in ((destination,) if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def _as_strided_kernel(xp, a, size, stride, storage_offset):
    from ember.storage import _root_array

    root = _root_array(a)
    itemsize = a.itemsize
    flat = root.reshape(-1).view(a.dtype) if root.dtype != a.dtype else root.reshape(-1)
    needed = storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    if needed > flat.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset} requiring a storage size of {needed * itemsize} are out of bounds "
                           f"for storage of size {flat.size * itemsize}")
    return xp.lib.stride_tricks.as_strided(flat[storage_offset:], size, tuple(s * itemsize for s in stride))


AS_STRIDED = Op("aten::as_strided", _as_strided_kernel, None, view=True)


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides and offset into the input's storage.
    Not differentiable in ember (PyTorch's as_strided backward is left out)."""
    if storage_offset is None:
        storage_offset = input.storage_offset()
    return AS_STRIDED(input, size=tuple(size), stride=tuple(stride), storage_offset=storage_offset)


# --- ops that return several views ----------------------------------------------


def split(input, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or pieces of
    the given sizes; each piece is a view."""
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sections = [step] * (size // step) + ([size % step] if size % step else []) if step else [0]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {dim}), but got split_sizes={sections}")
    out, start = [], 0
    for length in sections:
        out.append(narrow(input, dim, start, length))
        start += length
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` pieces of ceil(size / chunks) along ``dim``."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = input.shape[_wrap_dim(dim, input.ndim)]
    step = max(-(-size // chunks), 1)
    return split(input, step, dim)


def tensor_split(input, indices_or_sections, dim=0):
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
    else:
        bounds = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
        sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    return split(input, sizes, dim)


def _select_kernel(xp, a, dim, index):
    key = [slice(None)] * a.ndim
    key[dim] = index
    return a[tuple(key)]


def _select_backward(ctx, grad):
    from ember.native.factory import zeros

    (meta,) = ctx.input_meta
    dim, index = ctx.attrs["dim"], ctx.attrs["index"]
    full = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    return (SLICE_SCATTER(full, grad.unsqueeze(dim), dim=dim, start=index, end=index + 1, step=1),)


SELECT = Op("aten::select", _select_kernel, _select_backward, view=True)


def select(input, dim, index):
    """The slice at ``index`` along ``dim``, with that dim removed (a view)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    return SELECT(input, dim=dim, index=index % size if size else index)


def unbind(input, dim=0):
    """All slices along ``dim``, as a tuple of views."""
    dim = _wrap_dim(dim, input.ndim)
    return tuple(select(input, dim, i) for i in range(input.shape[dim]))


# --- ops that make new memory ---------------------------------------------------


def _cat_kernel(xp, *arrays, dim, lengths=None):
    return xp.concatenate(arrays, axis=dim)


def _cat_backward(ctx, grad):
    dim = ctx.attrs["dim"]
    out, start = [], 0
    for meta, needed in zip(ctx.input_meta, ctx.needs_input_grad):
        length = ctx.attrs["lengths"][len(out)]
        out.append(grad.narrow(dim, start, length) if needed else None)
        start += length
    return tuple(out)


CAT = Op("aten::cat", _cat_kernel, _cat_backward, promote="default")


def cat(tensors, dim=0):
    """Join tensors along an existing dim; dtypes promote, shapes must match elsewhere.
    1-d empty tensors are skipped, as in PyTorch."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
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


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


FLIP = Op("aten::flip", lambda xp, a, dims: xp.flip(a, dims).copy(), lambda ctx, g: (g.flip(ctx.attrs["dims"]),))


def flip(input, dims):
    """Reverse the order along ``dims`` (a copy: ember, like PyTorch, has no negative strides)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return FLIP(input, dims=tuple(_wrap_dim(d, input.ndim) for d in dims))


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


ROLL = Op("aten::roll", _roll_kernel, _roll_backward)


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` with wrap-around (flattened when dims is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        return ROLL(input.flatten(), shifts=shifts, dims=0).reshape(input.shape) if input.ndim else input.clone()
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return ROLL(input, shifts=shifts, dims=tuple(_wrap_dim(d, input.ndim) for d in dims))


def repeat(input, *sizes):
    """Tile the tensor ``sizes[i]`` times along each dim (new memory)."""
    sizes = _sizes(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    # Expand a new axis before each dim and merge: the same memory order as PyTorch.
    expanded_shape, merged_shape = [], []
    for r, s in zip(sizes, x.shape):
        expanded_shape += [r, s]
        merged_shape.append(r * s)
    interleaved = []
    for d in range(x.ndim):
        interleaved.append(1)
        interleaved.append(x.shape[d])
    y = x.reshape(tuple(interleaved)).expand(tuple(expanded_shape))
    return y.contiguous().reshape(tuple(merged_shape)) if y.numel() else y.reshape(tuple(merged_shape))


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None):
    if dim is None:
        input, dim = input.flatten(), 0
    dim = _wrap_dim(dim, input.ndim)
    if isinstance(repeats, int):
        x = input.unsqueeze(dim + 1)
        shape = list(x.shape)
        shape[dim + 1] = repeats
        y = x.expand(tuple(shape))
        new_shape = list(input.shape)
        new_shape[dim] *= repeats
        return y.reshape(tuple(new_shape))
    from ember.native.factory import arange

    index = arange(len(repeats), device=input.device).repeat_interleave_counts(repeats)
    return input.index_select(dim, index)
