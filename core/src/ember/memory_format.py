"""Memory formats: the layout (strides) of a new tensor made from another one, and the
``ember.preserve_format`` / ``contiguous_format`` / ``channels_last`` objects.

PyTorch counterpart: c10/core/MemoryFormat.h (the formats and channels-last strides),
aten/src/ATen/native/TensorFactories.cpp ``empty_like`` (preserve_format) and
c10/core/TensorImpl.h / aten/src/ATen/TensorUtils.cpp (``infer_dense_strides``,
``is_non_overlapping_and_dense``) (v2.13).

ember holds a tensor as a NumPy (or CuPy) array, whose strides are the tensor's, so a
layout is made by allocating a flat buffer and viewing it with the strides wanted.
"""

from functools import lru_cache


class memory_format:
    """A memory layout request, such as ``ember.channels_last``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_FORMATS = {f.name: f for f in (preserve_format, contiguous_format, channels_last, channels_last_3d)}


def _by_name(name):
    return _FORMATS[name]


# NOTE [ preserve_format ]
# PyTorch's empty_like (and so clone, zeros_like, ones_like, rand_like, ...) keeps the
# input's layout when asked to preserve it:
#   * an input that is non-overlapping and dense (its elements fill a block of memory
#     exactly once, in any dim order, e.g. a transpose) gives its exact strides;
#   * otherwise (an expanded or sliced input) `infer_dense_strides` sorts the dims by
#     stride, smallest innermost, with an insertion sort in which a stride-0 dim
#     compares as "ambiguous" and so keeps its place, and equal strides put the smaller
#     size inside; the result is dense strides in that order. TensorIterator orders
#     the dims of an elementwise op's output with the same comparison.
# contiguous_format is row-major; channels_last is row-major over (N, H, W, C).


def contiguous_strides(shape):
    """Row-major strides of ``shape``, in elements (size-1 dims included, as
    PyTorch)."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def channels_last_strides(shape):
    """Strides that keep channels innermost: (N, C, H, W) laid out as (N, H, W, C);
    5-d shapes as (N, D, H, W, C). Unlike row-major strides, a size-0 dim makes every
    stride outside it 0, as PyTorch's (an empty (2, 0, 3, 3) tensor: (0, 1, 0, 0))."""
    if len(shape) not in (4, 5):
        raise RuntimeError(f"required rank {4 if len(shape) < 5 else 5} tensor to use channels_last format")
    order = [1] + list(range(len(shape) - 1, 1, -1)) + [0]  # innermost first: C, W, H, (D), N
    return dense_strides(shape, order)


def dense_strides(shape, order):
    """Strides that lay the dims of ``shape`` out one after another in ``order``,
    innermost first (a size-0 dim makes every stride outside it 0)."""
    strides = [0] * len(shape)
    step = 1
    for dim in order:
        strides[dim] = step
        step *= shape[dim]
    return tuple(strides)


def is_non_overlapping_and_dense(shape, strides):
    """Whether the elements fill ``numel`` consecutive memory slots exactly once; true
    of any tensor with no elements, whose strides PyTorch keeps as they are."""
    if 0 in shape:
        return True
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _sorted_dims(ndim, should_swap):
    """The dims, innermost first, put in order by PyTorch's insertion sort, which stops at
    the first ``should_swap(outer, inner) < 0`` (so incomparable dims keep their order);
    infer_dense_strides and TensorIterator's reorder_dimensions share it, each with its
    own comparison."""
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return perm


def infer_dense_strides(shape, strides):
    """Dense strides in the dim order of ``strides`` (NOTE [ preserve_format ])."""
    ndim = len(shape)

    def should_swap(dim0, dim1):
        stride0, stride1 = strides[dim0], strides[dim1]
        if stride0 == 0 or stride1 == 0:
            return 0
        if stride0 != stride1:
            return -1 if stride0 < stride1 else 1
        return 1 if shape[dim0] > shape[dim1] else 0

    perm = _sorted_dims(ndim, should_swap)
    out = [0] * ndim
    step = 1
    for dim in perm:
        out[dim] = step
        if shape[dim] > 1:
            step *= shape[dim]
    return tuple(out)


def preserved_strides(shape, strides):
    """preserve_format's strides for a tensor of ``shape`` and ``strides``."""
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    return infer_dense_strides(shape, strides)


def suggest_strides(tensor, memory_format=None):
    """The strides a new tensor shaped like ``tensor`` gets under ``memory_format``
    (None means preserve_format, PyTorch's default for *_like and clone)."""
    shape = tuple(tensor.shape)
    if memory_format is None or memory_format is preserve_format:
        return preserved_strides(shape, tuple(tensor.stride()))
    if memory_format is contiguous_format:
        return contiguous_strides(shape)
    if memory_format is channels_last or memory_format is channels_last_3d:
        return channels_last_strides(shape)
    raise RuntimeError(f"unsupported memory format {memory_format!r}")


# NOTE [ The strides of an empty tensor ]
# PyTorch keeps strides on a tensor with no elements: an empty batch made
# channels_last has strides (256, 1, 32, 4) and reports it, and ops that follow the
# input's layout pass them on. NumPy gives every new empty array all-zero strides, but
# keeps the strides it is asked for (as_strided over an empty buffer) and those of
# views. So ember makes an empty array with the strides wanted when they are not
# row-major, and `Tensor.stride()` reads an empty array's strides, except all-zero
# ones, which stand for NumPy's default: row-major.


def empty_strided_array(xp, shape, strides, dtype):
    """An uninitialised array of ``shape`` with dense element ``strides`` (NOTE [ The
    strides of an empty tensor ])."""
    from ember.native.shape.views import restride

    numel = 1
    for size in shape:
        numel *= size
    if strides == contiguous_strides(shape):
        return xp.empty(shape, dtype)
    return restride(xp, xp.empty(numel, dtype), shape, strides)


def with_layout(xp, array, strides):
    """``array``'s values in a new array with ``strides`` (a copy)."""
    out = empty_strided_array(xp, array.shape, strides, array.dtype)
    out[...] = array
    return out


def is_contiguous_as(tensor, memory_format):
    """``Tensor.is_contiguous(memory_format)``: the strides are those of the format
    (size-1 dims may have any stride, as in PyTorch)."""
    shape = tuple(tensor.shape)
    if memory_format in (channels_last, channels_last_3d):
        # Checked on every dim but size-1 ones, empty or not, as PyTorch does.
        strides = tensor.stride()
        return all(size == 1 or s == w for size, s, w in zip(shape, strides, channels_last_strides(shape)))
    if tensor._data.size == 0:
        return True  # PyTorch: a tensor with no elements is row-major contiguous, whatever its strides
    return _has_strides(shape, tuple(tensor.stride()), contiguous_strides(shape))


def _has_strides(shape, strides, wanted):
    """Whether ``strides`` are ``wanted`` (size-1 dims may have any stride, as in PyTorch)."""
    return all(size < 2 or s == w for size, s, w in zip(shape, strides, wanted))


def contiguous_array(xp, a):
    """``a`` row-major with PyTorch's strides for its size-1 dims too (a reduction's
    result is allocated contiguous in PyTorch, whatever the input's layout; NumPy's
    keeps the input's order and gives size-1 dims arbitrary strides)."""
    from ember.native.shape.views import element_strides, restride

    if not hasattr(a, "strides") or a.ndim == 0 or a.size == 0:
        return a
    wanted = contiguous_strides(a.shape)
    if element_strides(a) == wanted:
        return a
    if not a.flags.c_contiguous:
        a = xp.ascontiguousarray(a)
    return restride(xp, a, a.shape, wanted)


def iterator_order(shape, operands):
    """TensorIterator's dims, fastest first, for inputs with element strides ``operands``
    (each broadcast to ``shape``, 0 on broadcast dims): sorted by the first operand that
    orders them (a 0 stride never does), ties to the smaller size inside. (NOTE [
    preserve_format ]: the same comparison as infer_dense_strides.)"""
    def should_swap(dim0, dim1):
        for strides in operands:
            stride0, stride1 = strides[dim0], strides[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 != stride1:
                return -1 if stride0 < stride1 else 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    return _sorted_dims(len(shape), should_swap)


def iterator_strides(shape, operands):
    """The strides TensorIterator gives a new output of ``shape`` computed from inputs
    with element strides ``operands``: dense strides in ``iterator_order``."""
    perm = iterator_order(shape, operands)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)
    return dense_strides(shape, perm)


# NOTE [ The layout of an elementwise result ]
# PyTorch's TensorIterator allocates an elementwise op's output in one of two ways.
# When every operand has the output's shape, it takes a shortcut: all row-major gives a
# row-major output, all channels_last a channels_last one, and all non-overlapping and
# dense with the same strides gives exactly those strides. Otherwise it sorts the dims
# (iterator_strides: the first operand that orders two dims decides, a broadcast dim
# never does) and lays the output out densely in that order. NumPy's ufuncs follow
# their inputs too, but when the inputs disagree they fall back to row-major, and they
# pick their own strides for size-1 dims; so an elementwise op with an input that is
# not row-major has its result re-laid-out to PyTorch's strides (`elementwise_layout`).
# A Python number counts as an operand where PyTorch wraps it in a 0-d tensor (x * 2:
# no longer "every operand has the output's shape"), not where it is a parameter of
# the kernel (clamp(x, 0.5), pow(x, 2), lerp's weight): `Op(elementwise="tensors")`.


def elementwise_strides(shape, operands):
    """The strides TensorIterator gives the output of ``shape`` of an elementwise op on
    ``operands``, ``(shape, element strides)`` pairs (NOTE [ The layout of an
    elementwise result ])."""
    if all(op_shape == shape for op_shape, _ in operands):
        if all(_has_strides(shape, strides, contiguous_strides(shape)) for _, strides in operands):
            return contiguous_strides(shape)
        if len(shape) in (4, 5) and all(_has_strides(shape, strides, channels_last_strides(shape))
                                        for _, strides in operands):
            return channels_last_strides(shape)
        first = operands[0][1]
        if all(strides == first for _, strides in operands) and is_non_overlapping_and_dense(shape, first):
            return first
    ndim = len(shape)
    broadcast = []
    for op_shape, strides in operands:
        lead = ndim - len(op_shape)
        broadcast.append(tuple(0 if d < lead or op_shape[d - lead] == 1 and shape[d] != 1 else strides[d - lead]
                               for d in range(ndim)))
    return iterator_strides(shape, broadcast)


@lru_cache(maxsize=256)
def _row_major_bytes(shape, itemsize):
    return tuple(stride * itemsize for stride in contiguous_strides(shape))


def elementwise_layout(xp, out, arrays, scalar_operands=True):
    """``out``, the result of an elementwise op on ``arrays`` (arrays and Python
    scalars), with PyTorch's strides: re-strided or copied only where they differ.
    ``scalar_operands``: a Python number is an operand (PyTorch wraps it in a 0-d
    tensor, as for ``x * 2``), not a parameter of the kernel (``clamp(x, 0.5)``)."""
    if out.size == 0:
        return out
    for a in arrays:
        if hasattr(a, "strides") and a.strides != _row_major_bytes(a.shape, a.itemsize):
            break
    else:  # row-major operands, to the strides of their size-1 dims: a row-major result
        return out
    from ember.native.shape.views import element_strides, restride

    operands = [(a.shape, element_strides(a)) if hasattr(a, "strides") else ((), ()) for a in arrays
                if hasattr(a, "strides") or scalar_operands and isinstance(a, (int, float, complex))]
    wanted = elementwise_strides(out.shape, operands)
    have = element_strides(out)
    if have == wanted:
        return out
    if all(h == w for size, h, w in zip(out.shape, have, wanted) if size != 1):
        return restride(xp, out, out.shape, wanted)  # only size-1 dims differ: the same memory
    return with_layout(xp, out, wanted)


# NOTE [ suggest_memory_format ]
# Ops that choose a layout for a new tensor (convolution, pooling) ask the input which
# format its strides suggest. PyTorch's rule (c10 is_channels_last_strides_2d): walk
# the dims C, W, H, N; each stride must be at least the extent of the dims inside it
# (a size-1 dim adds no extent), C's stride must not be 0, and an N stride equal to
# C's (an N111 tensor, or one sliced to that) falls back to contiguous. So ambiguous
# tensors (every non-batch size 1) suggest contiguous, and a transposed-but-dense
# NHWC view suggests channels_last.


def strides_suggest_channels_last(shape, strides):
    """Whether a 4-d tensor of ``shape`` and element ``strides`` suggests channels_last."""
    if len(shape) != 4 or strides[1] == 0:
        return False
    extent = 0
    for dim in (1, 3, 2, 0):
        if shape[dim] == 0 or strides[dim] < extent:
            return False
        if dim == 0 and extent == strides[1]:
            return False
        extent = strides[dim] * (shape[dim] if shape[dim] > 1 else 1)
    return True


def array_suggests_channels_last(a):
    """:func:`strides_suggest_channels_last` for a NumPy/CuPy array (strides in bytes),
    cached per (shape, strides, itemsize): a convolution asks it of each of its arrays
    on every call, and a network's layers see few distinct layouts."""
    return a.ndim == 4 and _byte_strides_suggest_channels_last(a.shape, a.strides, a.itemsize)


@lru_cache(maxsize=1024)
def _byte_strides_suggest_channels_last(shape, byte_strides, itemsize):
    return strides_suggest_channels_last(shape, tuple(s // itemsize for s in byte_strides))


def suggest_memory_format(tensor):
    """``Tensor.suggest_memory_format()``: channels_last or contiguous_format (NOTE
    [ suggest_memory_format ])."""
    if strides_suggest_channels_last(tuple(tensor.shape), tuple(tensor.stride())):
        return channels_last
    return contiguous_format


def channels_last_array(xp, a):
    """``a`` (4-d) with channels_last strides: itself if it has them, else a copy."""
    from ember.native.shape.views import element_strides

    wanted = channels_last_strides(a.shape)
    return a if _has_strides(a.shape, element_strides(a), wanted) else with_layout(xp, a, wanted)
