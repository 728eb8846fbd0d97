"""View ops: ``view reshape permute transpose t expand squeeze unsqueeze flatten
unflatten narrow select movedim as_strided``, with the stride helpers they share (the
ops that return several views are in splitting.py).

PyTorch counterpart: aten/src/ATen/native/TensorShape.cpp and
aten/src/ATen/TensorUtils.cpp (``computeStride``: when a view is possible) (v2.13).

A view op returns an array over the input's memory (the dispatcher then records the
base and shares the version counter). The backward of a view op is the inverse view
or a reduction, written with ember ops.
"""

import numpy as np

from ember.autograd.forward_grad import AUTO_LINEAR
from ember.dispatcher import Op
from ember.dtypes import is_ml_dtype
from ember.tensor import _wrap_dim

# NOTE [ Strides of size-1 dims ]
# A dim of size 1 is never stepped over, so its stride is a free choice; PyTorch fixes
# it per op (unsqueeze: size * stride of the dim after it; expand keeps the old one)
# and so do NumPy's view functions, in their own way. Where the two differ, the view
# kernel re-strides NumPy's result to PyTorch's numbers (`restride`), so `stride()`
# reads the same in both. Only size-1 and zero-stride dims change: the memory an
# element is read from never does.


def strided(xp, a, shape, byte_strides):
    """``xp.lib.stride_tricks.as_strided`` that keeps ml_dtypes' types: NumPy rebuilds the
    view's dtype from a type string, and float8_e5m2's (``'<f1'``) names none, so such an
    array is re-strided as unsigned bits of its size and viewed back."""
    if not is_ml_dtype(a.dtype):
        return xp.lib.stride_tricks.as_strided(a, shape, byte_strides)
    bits = xp.lib.stride_tricks.as_strided(a.view(f"u{a.itemsize}"), shape, byte_strides)
    return bits.view(a.dtype)


def restride(xp, a, shape, strides, writeable=True):
    """An array over ``a``'s memory (from its first element) with element ``strides``."""
    itemsize = a.itemsize
    out = strided(xp, a, shape, tuple(s * itemsize for s in strides))
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
        # NumPy refuses exactly when no strides describe the new shape
        out.shape = shape
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and "
                           "stride (at least one dimension spans across two contiguous "
                           "subspaces). Use .reshape(...) instead.") from None
    if 1 in shape or out.size == 0:  # NOTE [ The strides of a view ]
        strides = compute_stride(a.shape, element_strides(a), shape)
        if strides != element_strides(out):
            out = restride(xp, out, shape, strides, writeable=out.flags.writeable)
    return out


# NOTE [ The strides of a view ]
# Where a view is possible, the strides of every dim of size > 1 are fixed by the
# memory; only size-1 dims (and empty tensors) leave a choice. PyTorch's computeStride
# makes it by walking both shapes from the last dim, one "chunk" at a time: a chunk is
# a run of input dims that step through memory as one block, starting at the stride
# of its last dim. Each view dim that falls in a chunk (a size-1 dim as soon as it is
# reached) gets the chunk's base stride times the elements of the view's dims already
# placed in that chunk. An empty tensor's view is row-major (a size-0 or size-1 dim
# counting as 1), unless its shape does not change.


def compute_stride(old_shape, old_strides, shape):
    """The strides PyTorch gives ``view(shape)`` of a tensor with ``old_shape`` and
    ``old_strides`` (NOTE [ The strides of a view ]); the caller knows it is viewable."""
    if not old_shape:
        return (1,) * len(shape)
    if 0 in old_shape:
        if tuple(old_shape) == tuple(shape):
            return tuple(old_strides)
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= max(size, 1)
        return tuple(reversed(strides))
    strides = [0] * len(shape)
    view_dim = len(shape) - 1
    base = old_strides[-1]
    chunk_numel = view_numel = 1
    for dim in range(len(old_shape) - 1, -1, -1):
        chunk_numel *= old_shape[dim]
        chunk_ends = dim == 0 or old_shape[dim - 1] != 1 and old_strides[dim - 1] != chunk_numel * base
        if not chunk_ends:
            continue
        while view_dim >= 0 and (view_numel < chunk_numel or shape[view_dim] == 1):
            strides[view_dim] = view_numel * base
            view_numel *= shape[view_dim]
            view_dim -= 1
        if dim > 0:
            base = old_strides[dim - 1]
            chunk_numel = view_numel = 1
    return tuple(strides)


def _reshape_backward(ctx, grad):
    (meta,) = ctx.input_meta
    return (grad.reshape(meta[0]),)


VIEW = Op("aten::view", _view_kernel, _reshape_backward, view=True)
# reshape is no op of its own in PyTorch: it calls one of these (see `reshape` below).
RESHAPE_ALIAS = Op("aten::_reshape_alias", _view_kernel, _reshape_backward, view=True)
UNSAFE_VIEW = Op("aten::_unsafe_view", lambda xp, a, shape: a.reshape(shape), _reshape_backward, jvp=AUTO_LINEAR)


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
    # Not a view for autograd (``_is_view()`` is False, as in PyTorch: the bytes mean
    # something else), but the same memory, so it shares the version counter.
    out = _make_tensor(input._data.view(dtype.np), input._device)
    out._version_counter = input._version_counter
    return out


def reshape(input, *shape):
    """A view when the strides allow one, else a copy (``torch.reshape``).

    As in PyTorch, a contiguous input is viewed (``ViewBackward0``), another input whose
    strides allow the new shape gets an alias with computed strides
    (``ReshapeAliasBackward0``), and any other is copied to a contiguous tensor first
    (``CloneBackward0`` then ``UnsafeViewBackward0``, not a view)."""
    shape = infer_size(_sizes(shape), input.numel())
    if input._data.flags.c_contiguous:
        return VIEW(input, shape=shape)
    if _viewable(input._data, shape):
        return RESHAPE_ALIAS(input, shape=shape)
    from ember.native.copy import CLONE

    return UNSAFE_VIEW(CLONE(input, order="C"), shape=shape)


def _viewable(a, shape):
    try:
        a.view().shape = shape  # NumPy refuses exactly when no strides describe the new shape
    except AttributeError:
        return False
    return True


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
    return transpose(input, -2, -1).conj()


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
    overlapping = overlapping and all(shape)  # an empty tensor has no element to share
    writeable = not overlapping and getattr(a.flags, "writeable", True)
    return restride(xp, a, tuple(shape), tuple(strides), writeable)


EXPAND = Op("aten::expand", _expand_kernel, lambda ctx, g: (g,), view=True)


def expand(input, *sizes):
    """Broadcast to a larger shape without copying; -1 keeps a dimension."""
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
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


# PyTorch's three overloads, whose nodes are numbered apart: squeeze(), squeeze(dim), squeeze(dims).
SQUEEZE = Op("aten::squeeze", _squeeze_kernel, _reshape_backward, view=True)
SQUEEZE_DIM = Op("aten::squeeze.dim", _squeeze_kernel, _reshape_backward, view=True,
                 backward_name="SqueezeBackward1")
SQUEEZE_DIMS = Op("aten::squeeze.dims", _squeeze_kernel, _reshape_backward, view=True,
                  backward_name="SqueezeBackward2")


def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim`` that are 1)."""
    if dim is None:
        return SQUEEZE(input, dims=tuple(range(input.ndim)))
    if isinstance(dim, (int, np.integer)):
        return SQUEEZE_DIM(input, dims=(_wrap_dim(dim, input.ndim),) if input.ndim else ())
    return SQUEEZE_DIMS(input, dims=tuple(_wrap_dim(d, input.ndim) for d in dim) if input.ndim else ())


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


def ravel(input):
    """The elements in row-major order as a 1-d tensor: a view when the input is
    contiguous, else a contiguous copy (``input.contiguous().view(-1)``)."""
    return view(input.contiguous(), -1)


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


def _slice_kernel(xp, a, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    return a[tuple(index)]


def _slice_backward(ctx, grad):
    from ember.native.factory import zeros

    (meta,) = ctx.input_meta
    dim, start, end, step = _slice_attrs(ctx)
    full = zeros(meta[0], dtype=grad.dtype, device=grad.device)
    return (SLICE_SCATTER(full, grad, dim=dim, start=start, end=end, step=step),)


SLICE = Op("aten::slice", _slice_kernel, _slice_backward, view=True)


def _slice_scatter_kernel(xp, a, src, dim=0, start=None, end=None, step=1):
    out = a.copy()
    index = [slice(None)] * a.ndim
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def _slice_attrs(ctx):
    """(dim, start, end, step), with the schema's defaults for those not given."""
    attrs = ctx.attrs
    return attrs.get("dim", 0), attrs.get("start"), attrs.get("end"), attrs.get("step", 1)


def _slice_scatter_backward(ctx, grad):
    dim, start, end, step = _slice_attrs(ctx)
    need_a, need_src = ctx.needs_input_grad
    grad_a = None
    if need_a:  # the slice was overwritten: no gradient flows to that part of `a`
        from ember.native.factory import zeros_like

        hole = zeros_like(SLICE(grad, dim=dim, start=start, end=end, step=step))
        grad_a = SLICE_SCATTER(grad, hole, dim=dim, start=start, end=end, step=step)
    grad_src = SLICE(grad, dim=dim, start=start, end=end, step=step) if need_src else None
    return grad_a, grad_src


SLICE_SCATTER = Op("aten::slice_scatter", _slice_scatter_kernel, _slice_scatter_backward, promote="default",
                   jvp=AUTO_LINEAR)


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
    if n == 0:  # nothing to move: an alias, as in PyTorch
        from ember.native.indexing.indexing import getitem

        return getitem(input, Ellipsis)
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def storage_elements(xp, a):
    """A 1-d array over the whole memory under ``a``, in ``a``'s dtype, in address
    order (so element ``i`` is storage offset ``i``). The owning array is dense, but
    maybe not row-major (the clone of a transpose): its memory is read as it lies,
    never through ``reshape``, which would copy."""
    from ember.storage import _root_array

    root = _root_array(a)
    flat = strided(xp, root, (root.size,), (root.itemsize,))
    return flat.view(a.dtype) if root.dtype != a.dtype else flat


def writeable_alias(xp, a):
    """``a`` itself, or, when ``a`` is read-only because its elements overlap (an
    expanded tensor), an array with the same geometry that may be written."""
    if getattr(a.flags, "writeable", True):
        return a
    flat = storage_elements(xp, a)
    offset = (_address(a) - _address(flat)) // a.itemsize
    return strided(xp, flat[offset:], a.shape, a.strides)


def _address(a):
    from ember.tensor import _array_address

    return _array_address(a)


def _as_strided_kernel(xp, a, size, stride, storage_offset, input_geometry=None):
    itemsize = a.itemsize
    flat = storage_elements(xp, a)
    needed = storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    if needed > flat.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset} requiring a storage size of {needed * itemsize} are out of bounds "
                           f"for storage of size {flat.size * itemsize}")
    return strided(xp, flat[storage_offset:], size, tuple(s * itemsize for s in stride))


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


# --- select ------------------------------------------------------------------


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
