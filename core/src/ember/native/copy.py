"""Copies and conversions: ``clone``, ``contiguous``, ``to`` (dtype and device), ``copy_``.

PyTorch counterpart: aten/src/ATen/native/TensorConversions.cpp (``to``,
``_to_copy``) and aten/src/ATen/native/Copy.cpp (``copy_``) (v2.13).
"""

from ember import dtypes
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.device import device as Device
from ember.device import with_index
from ember.dispatcher import Op
from ember.native.pointwise.unary import quiet
from ember.native.support._inplace import check_no_partial_overlap, inplace


def _clone_kernel(xp, a, strides=None, order="K"):
    # ``strides`` come from ember/memory_format.py (preserve_format by default: a clone
    # of a transpose is transposed, a clone of an expanded tensor dense in its order);
    # without them, NumPy's order ("K": the input's dim order, "C": row-major).
    if strides is None:
        return a.copy(order=order)
    from ember.memory_format import with_layout

    return with_layout(xp, a, strides)


CLONE = Op("aten::clone", _clone_kernel, lambda ctx, grad: (grad,), jvp=AUTO_LINEAR)


def clone(input, *, memory_format=None):
    """A copy of ``input`` with its own memory, laid out by ``memory_format``
    (preserve_format: the same dim order, NOTE [ preserve_format ]); gradients flow
    back unchanged."""
    from ember.memory_format import contiguous_strides, suggest_strides

    strides = suggest_strides(input, memory_format)
    if strides == contiguous_strides(input.shape):
        return CLONE(input, order="C")
    return CLONE(input, strides=strides)


def contiguous(input, memory_format=None):
    """``input`` itself when it is already laid out as ``memory_format`` (row-major by
    default), else a copy that is."""
    from ember.memory_format import contiguous_format, is_contiguous_as

    memory_format = memory_format or contiguous_format
    if is_contiguous_as(input, memory_format):
        return input
    return clone(input, memory_format=memory_format)


@quiet  # silent when a value overflows the narrower type (it becomes inf), as torch
def _cast_kernel(xp, a, dtype):
    return dtypes.cast_array(a, dtype.np)


def _cast_backward(ctx, grad):
    (source_meta,) = ctx.input_meta
    return (grad.to(dtypes.from_numpy_dtype(source_meta[1])),)


CAST = Op("aten::_to_copy", _cast_kernel, _cast_backward, backward_name="ToCopyBackward0", jvp=AUTO_LINEAR)


def _parse_to(tensor, args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if hasattr(arg, "_data") and hasattr(arg, "dtype"):  # to(other): checked first, as == on a tensor
            dtype, device = arg.dtype, arg.device              # is elementwise
        elif isinstance(arg, dtypes.dtype) or arg is float or arg is int or arg is bool:
            dtype = arg
        elif isinstance(arg, (str, Device)):
            device = arg
        elif isinstance(arg, bool):
            pass
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {arg!r}")
    return (None if device is None else Device(device)), (None if dtype is None else dtypes.to_dtype(dtype)), copy


def to(tensor, *args, **kwargs):
    """Return ``tensor`` converted to another dtype and/or device (``Tensor.to``);
    ``memory_format=`` lays the result out in that format (a copy unless the strides
    already suggest it, as in PyTorch)."""
    memory_format = kwargs.get("memory_format")
    device, dtype, copy = _parse_to(tensor, args, dict(kwargs))
    if device is not None:
        device = with_index(device)  # "cuda" is the current cuda device, as in PyTorch
    out = tensor
    if device is not None and device != tensor._device:
        out = _move(out, device)
        copy = False
    if dtype is not None and dtype.np != out._data.dtype:
        out = CAST(out, dtype=dtype)
        copy = False
    if copy:
        out = CLONE(out)
    return _to_memory_format(out, memory_format, copied=out is not tensor)


def _to_memory_format(tensor, memory_format, copied):
    """``tensor`` in ``memory_format``. Without a conversion PyTorch returns the tensor
    itself when its strides suggest that format (even a non-contiguous one); a tensor
    the conversion copied is laid out in it."""
    from ember.memory_format import preserve_format, suggest_memory_format

    if memory_format is None or memory_format is preserve_format:
        return tensor
    if copied:
        return contiguous(tensor, memory_format=memory_format)
    if suggest_memory_format(tensor) is memory_format:
        return tensor
    return clone(tensor, memory_format=memory_format)


def _move(tensor, device):
    from ember.autograd.grad_mode import grad_state
    from ember.tensor import _make_tensor

    array = tensor._device.backend.to_host(tensor._data)
    host = array.copy() if array is tensor._data else array  # never alias the source's memory
    moved = _make_tensor(device.backend.from_host(host, device.index), device)
    if grad_state.enabled and tensor._requires_grad:
        from ember.autograd.function import attach_node

        attach_node(moved, "ToCopyBackward0", (tensor,), lambda grad: (grad.to(tensor._device),))
    return moved


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast, moved across devices; or a Python number) into
    ``self`` in place."""
    if not hasattr(src, "_data"):
        from ember.native.factory import tensor

        src = tensor(src, device=self._device)
    if src._device != self._device:
        src = src.to(self._device)
    check_no_partial_overlap(self._data, src._data)
    if src.dtype is not self.dtype:
        src = CAST(src, dtype=self.dtype)
    return inplace(self, COPY, (self, src))


def _copy_kernel(xp, a, b):
    try:
        return xp.broadcast_to(b, a.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(a.shape)}) must match the size of tensor b "
                           f"({list(b.shape)}): {list(b.shape)} cannot be broadcast to {list(a.shape)}") from None


def _copy_backward(ctx, grad):
    # The old value of `self` is overwritten: its gradient is zero (PyTorch gives zeros, not None).
    return (grad * 0 if ctx.needs_input_grad[0] else None), grad


COPY = Op("aten::copy", _copy_kernel, _copy_backward, promote="none", jvp=AUTO_LINEAR)
