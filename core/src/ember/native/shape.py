"""Shape and view ops: ``view reshape permute transpose expand squeeze unsqueeze
flatten unflatten narrow movedim as_strided`` (views) and ``cat stack flip roll repeat
tile split chunk unbind`` (new memory, or tuples of views).

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp and
aten/src/ATen/TensorUtils.cpp (``computeStride``: when a view is possible) (v2.13).

A view op returns an array over the input's memory (the dispatcher then records the
base and shares the version counter). The backward of a view op is the inverse view
or a reduction, written with ember ops.
"""

from ember.dispatcher import Op
from ember.tensor import _wrap_dim

# NOTE [ Strides of size-1 dims ]
# A dim of size 1 is never stepped over, so its stride is a free choice; PyTorch fixes
# it per op (unsqueeze: size * stride of the dim after it; expand keeps the old one)
# and so do NumPy's view functions, in their own way. Where the two differ, the view
# kernel re-strides NumPy's result to PyTorch's numbers (`restride`), so `stride()`
# reads the same in both. Only size-1 and zero-stride dims change: the memory an
# element is read from never does.


def restride(xp, a, shape, strides, writeable=True):
    """An array over ``a``'s memory (from its first element) with element ``strides``."""
    itemsize = a.itemsize
    out = xp.lib.stride_tricks.as_strided(a, shape, tuple(s * itemsize for s in strides))
    if not writeable and getattr(out.flags, "writeable", False):
        out.flags.writeable = False  # several elements share one memory location
    return out


def element_strides(a):
    itemsize = a.itemsize
    return tuple(s // itemsize for s in a.strides)


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
        if known == 0:
            if numel == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                   "unspecified dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
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
T_OP = Op("aten::t", _transpose_kernel, TRANSPOSE.backward, view=True)  # its node is TBackward0, as in PyTorch


def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    n = input.ndim
    return TRANSPOSE(input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    """Transpose a matrix; a 0-d or 1-d tensor is returned as it is (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return T_OP(input, dim0=0, dim1=1 if input.ndim == 2 else 0)


def adjoint(input):
    return transpose(input, -2, -1)


def _expand_kernel(xp, a, shape):
    # PyTorch's expand geometry: a dim that keeps its size keeps its stride, a
    # broadcast dim gets stride 0, a new leading dim of size 1 the stride unsqueeze
    # would give it. Writes are refused when elements overlap, as in PyTorch.
    old_shape, old_strides = a.shape, element_strides(a)
    lead = len(shape) - a.ndim
    strides = [0] * len(shape)
    overlapping = False
    next_extent = 1  # size * stride of the dim to the right
    for i in range(len(shape) - 1, -1, -1):
        if i >= lead and old_shape[i - lead] == shape[i]:
            stride = old_strides[i - lead]
        elif i < lead and shape[i] == 1:
            stride = next_extent
        else:
            stride = 0
            overlapping = overlapping or shape[i] > 1
        strides[i] = stride
        next_extent = shape[i] * stride
    if tuple(shape) == old_shape and tuple(strides) == old_strides:
        return a.view()
    writeable = not overlapping and getattr(a.flags, "writeable", True)
    return restride(xp, a, tuple(shape), tuple(strides), writeable)


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
    return EXPAND(input, shape=tuple(shape))


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
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   "between arg 0 and arg 1.")
    from ember.tensor import Size

    return Size(result)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def _unsqueeze_kernel(xp, a, dim):
    out = xp.expand_dims(a, dim)
    # PyTorch's stride for the new dim: the extent of the dim after it, or 1 at the end.
    # (NumPy's expand_dims may also renumber the strides of other size-1 dims.)
    strides = element_strides(a)
    new_stride = a.shape[dim] * strides[dim] if dim < a.ndim else 1
    wanted = strides[:dim] + (new_stride,) + strides[dim:]
    if element_strides(out) != wanted:
        out = restride(xp, out, out.shape, wanted)
    return out


UNSQUEEZE = Op("aten::unsqueeze", _unsqueeze_kernel, lambda ctx, g: (g.squeeze(ctx.attrs["dim"]),), view=True)


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
    _check_unflatten_sizes(tuple(sizes), input.shape[dim], dim)
    sizes = infer_size(tuple(sizes), input.shape[dim])
    # Splitting one dim in several is always possible without a copy.
    return view(input, tuple(input.shape[:dim]) + sizes + tuple(input.shape[dim + 1:]))


def _check_unflatten_sizes(sizes, size, dim):
    """PyTorch's unflatten message when the sizes cannot multiply up to the dim's size
    (more than one -1, or -1 next to a 0, are left to infer_size's errors)."""
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    inferred = sizes.count(-1)
    if inferred > 1 or (inferred == 1 and known == 0):
        return
    if (size % known if inferred else known != size):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({size}) in the input tensor")


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
    grad_a = None
    if need_a:  # the slice was overwritten: no gradient flows to that part of `a`
        from ember.native.factory import zeros_like

        hole = zeros_like(SLICE(grad, dim=dim, start=start, end=end, step=step))
        grad_a = SLICE_SCATTER(grad, hole, dim=dim, start=start, end=end, step=step)
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


def _as_strided_kernel(xp, a, size, stride, storage_offset, input_geometry=None):
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


def _storage_indices(xp, size, stride, offset):
    """The storage position of every element of a (size, stride, offset) geometry."""
    index = xp.full(tuple(size), offset, dtype="int64")
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        index = index + xp.arange(n, dtype="int64").reshape(shape) * st
    return index


def _as_strided_grad_kernel(xp, grad, size, stride, storage_offset, input_geometry):
    # Scatter the gradient into a zero storage through the output's geometry (elements
    # that alias add up), then read it back through the input's geometry.
    in_size, in_stride, in_offset = input_geometry
    out_index = _storage_indices(xp, size, stride, storage_offset)
    in_index = _storage_indices(xp, in_size, in_stride, in_offset)
    extent = 1 + max(int(out_index.max()) if out_index.size else 0, int(in_index.max()) if in_index.size else 0)
    storage = xp.zeros(extent, dtype=grad.dtype)
    xp.add.at(storage, out_index.reshape(-1), grad.reshape(-1))
    return storage[in_index]


AS_STRIDED_BACKWARD = Op("aten::as_strided_backward", _as_strided_grad_kernel, None)
AS_STRIDED = Op("aten::as_strided", _as_strided_kernel,
                lambda ctx, grad: (AS_STRIDED_BACKWARD(grad, **ctx.attrs),), view=True)


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides and offset into the input's storage.
    Its gradient is first-order only in ember."""
    if storage_offset is None:
        storage_offset = input.storage_offset()
    geometry = (tuple(input.shape), input.stride(), input.storage_offset())
    return AS_STRIDED(input, size=tuple(size), stride=tuple(stride), storage_offset=storage_offset,
                      input_geometry=geometry)


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
        return split(input, sizes, dim)
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    pieces = []
    for start, end in zip(bounds, bounds[1:]):
        start = min(max(start if start >= 0 else start + size, 0), size)
        end = min(max(end if end >= 0 else end + size, start), size)
        pieces.append(narrow(input, dim, start, end - start))
    return tuple(pieces)


def _select_kernel(xp, a, dim, index):
    # The trailing Ellipsis keeps a 0-d result an array over `a` (NumPy would
    # return a copied scalar for a full integer key).
    return a[(slice(None),) * dim + (index, Ellipsis)]


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


def _unbind_kernel(xp, a, dim):
    lead = (slice(None),) * dim
    return tuple(a[lead + (i,)] for i in range(a.shape[dim]))


def _unbind_backward(ctx, *grads):
    # One stack of the pieces' gradients (a missing one counts as zeros), not one
    # zero-filled input-sized buffer per piece as n SelectBackwards would make.
    dim = ctx.attrs["dim"]
    shape, np_dtype = ctx.input_meta[0]
    piece_shape = shape[:dim] + shape[dim + 1:]
    present = next(g for g in grads if g is not None)
    from ember.native.factory import zeros

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


CAT = Op("aten::cat", _cat_kernel, _cat_backward, promote="default")


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


def atleast_1d(input):
    return input.reshape(1) if input.ndim == 0 else input


def atleast_2d(input):
    return input.reshape(1, -1) if input.ndim < 2 else input


def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-d tensors); 0-d tensors count as 1-d."""
    tensors = [atleast_1d(t) for t in tensors]
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0, after making 0-d and 1-d tensors rows."""
    tensors = [atleast_2d(t) for t in tensors]
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(tensors, 0)


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


REPEAT = Op("aten::repeat", _repeat_kernel, _repeat_backward)


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
