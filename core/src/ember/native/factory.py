"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``randn``, the ``*_like`` forms.

PyTorch counterpart: aten/src/ATen/native/TensorFactories.cpp, RangeFactories.cpp
(``arange``, ``linspace``), torch/csrc/utils/tensor_new.cpp (inferring dtype from
Python data) and aten/src/ATen/native/Distributions.cpp (``rand``, ``randint``) (v2.13).

Factories build the array on the host with NumPy, in the requested dtype, then hand it
to the device's backend; random factories draw from an ``ember.Generator`` (see
ember/generator.py): the same seed gives PyTorch's CPU numbers, on every device.
Left out: ``out=``, ``layout=``, ``pin_memory`` (accepted and ignored by ``tensor``).
"""

import collections.abc
import math
import operator
import warnings

import numpy as np

from ember import dtypes
from ember.device import CPU, _default_device, with_index
from ember.device import device as Device
from ember.dispatch_modes import modes
from ember.dtypes import is_floating_array
from ember.native.random import transformations
from ember.random import Generator, generator_or_default
from ember.tensor import Tensor, _make_tensor

# C++ names of the element types, which PyTorch's range errors use.
_C_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
                 "int32": "int", "int64": "long", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "float32": "float", "float64": "double"}


def _device(device):
    return _default_device[0] if device is None else Device(device)


def _finish(host_array, dtype, device, requires_grad):
    """Move a host array to ``device`` and wrap it as a leaf tensor."""
    if requires_grad and dtype.category < dtypes.FLOATING:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    dev = with_index(_device(device))
    array = dev.backend.from_host(host_array, dev.index)
    return _make_tensor(array, dev, requires_grad=bool(requires_grad))


def _shape(size, fn_name, keyword=None):
    """``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros([2, 3])`` and ``zeros(size=(2, 3))``
    (``keyword``) all mean shape (2, 3)."""
    if keyword is not None:
        if size:
            raise TypeError(f"{fn_name}() got multiple values for argument 'size'")
        size = (keyword,)
    if not size:
        raise TypeError(f"{fn_name}() missing 1 required positional arguments: \"size\"")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    shape = []
    for position, s in enumerate(size):
        if isinstance(s, bool) or isinstance(s, (float, np.floating)):
            s_type = type(s).__name__
            raise TypeError(f"{fn_name}(): argument 'size' failed to unpack the object at pos {position + 1} "
                            f"with error \"type must be tuple of ints,but got {s_type}\"")
        try:
            shape.append(operator.index(s))  # ints, NumPy ints, one-element integer tensors
        except TypeError:
            raise TypeError(f"{fn_name}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {position}") from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
    return tuple(shape)


def _size_argument(size, fn_name):
    """The ``size`` argument of ``full``/``randint``, which must be a sequence."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn_name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return _shape((size,), fn_name)


def _float_dtype(dtype):
    return dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)


def _legacy_name(d):
    from ember.native.support._inplace import _type_name

    return _type_name(d)


# --- from data -----------------------------------------------------------------


def _infer_dtype(data):
    """The dtype PyTorch gives Python data: each element's type promoted with the
    others' (``promote_types``), a Python bool, int or float being bool, int64 or the
    default float and a NumPy scalar or a tensor its own dtype: ``[1, 2.5]`` is float32,
    ``[np.float64(1.), 2]`` float64, ``[np.int32(1), np.int8(2)]`` int32."""
    if isinstance(data, np.generic):
        return dtypes.from_numpy_dtype(data.dtype)
    result, numpy_bool = None, False
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, Tensor):
            d = x.dtype
        elif isinstance(x, np.generic):
            d = dtypes.from_numpy_dtype(x.dtype)
            numpy_bool = numpy_bool or d is dtypes.bool_
        elif isinstance(x, bool):
            d = dtypes.bool_
        elif isinstance(x, int):
            d = dtypes.int64
        elif isinstance(x, float):
            d = dtypes.get_default_dtype()
        elif isinstance(x, complex):
            d = dtypes.default_complex_dtype()
        elif isinstance(x, str):
            raise TypeError("new(): invalid data type 'str'")
        elif isinstance(x, collections.abc.Sequence):  # a deque, a range: any sequence, as torch
            stack.extend(x)
            continue
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        result = d if result is None else dtypes.promote_types(result, d)
    if numpy_bool and result.category == dtypes.INTEGRAL:
        # PyTorch stores each element as the result type; np.bool_ has no __index__
        raise TypeError("'numpy.bool' object cannot be interpreted as an integer")
    return dtypes.get_default_dtype() if result is None else result  # an empty list: the default


def _to_host_nested(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        return [_to_host_nested(x) for x in data]
    return data


def _python_data_to_array(data, d=None):
    """Nested Python data as a NumPy array of its natural type (bool, int64, float64);
    ``d``, the dtype it becomes, words the error for ragged data as torch does."""
    host = _to_host_nested(data)
    try:
        values = np.array(host)
    except OverflowError:
        values = None
    except ValueError:  # ragged: NumPy's "inhomogeneous shape", said as torch says it
        _check_rectangular(data, d is not None and d.is_floating_point)
        raise
    if values is None or values.dtype.kind == "O" or values.dtype == np.uint64:  # NumPy's fallbacks past int64
        raise ValueError("Overflow when unpacking long long")
    return values


def _is_sequence(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, (np.ndarray, Tensor)) and x.ndim > 0)


def _check_rectangular(data, floating=False):
    """torch's error for ragged nested data: the sizes are read down the first elements
    (``[[1, 2], [3]]`` is 2 x 2), then every sequence is checked against them, depth
    first; a sequence where a number belongs is refused as the number's type would."""
    sizes, first = [], data
    while _is_sequence(first):
        sizes.append(len(first))
        if not len(first):
            break
        first = first[0]
    stack = [(data, 0)]
    while stack:
        x, dim = stack.pop()
        if dim == len(sizes):
            if _is_sequence(x):
                kind = type(x).__name__
                raise TypeError(f"must be real number, not {kind}" if floating
                                else f"'{kind}' object cannot be interpreted as an integer")
            continue
        if not _is_sequence(x):
            raise TypeError("not a sequence")
        if len(x) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
        stack.extend((item, dim + 1) for item in reversed(list(x)))


def _check_fits(values, d):
    """PyTorch refuses Python data that overflows an integer dtype (a negative int may
    still wrap into uint8, as in C); floats simply round to the floating dtype."""
    if d.category != dtypes.INTEGRAL or values.size == 0:
        return
    info = np.iinfo(d.np)
    if is_floating_array(values.dtype):
        ok = np.isfinite(values).all() and values.min() >= info.min and values.max() <= info.max
    elif values.dtype.kind in "iu":
        low = -info.max if not d.is_signed else info.min
        ok = int(values.min()) >= low and int(values.max()) <= info.max
    else:
        ok = True
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` (nested lists, a scalar, a NumPy array or a tensor) into a new tensor.

    Python floats become the default dtype (float32), ints int64, bools bool; a NumPy
    array or scalar keeps its dtype.

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype
    ember.int64
    >>> ember.tensor([1, 2.5])
    tensor([1.0000, 2.5000])
    """
    if isinstance(data, Tensor):
        import warnings

        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() "
                      "or sourceTensor.clone().detach().requires_grad_(True), rather than ember.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        out = data.detach().clone()
        if dtype is not None or device is not None:
            out = out.to(device=device or out.device, dtype=dtype or out.dtype)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(data, (np.ndarray, np.generic)):  # a NumPy scalar keeps its dtype too
        d = dtypes.from_numpy_dtype(data.dtype) if dtype is None else dtypes.to_dtype(dtype)
        host = dtypes.cast_array(np.asarray(data, order="C"), d.np)
    else:
        d = _infer_dtype(data) if dtype is None else dtypes.to_dtype(dtype)
        values = _python_data_to_array(data, d)
        _check_fits(values, d)
        host = dtypes.cast_array(values, d.np)
    return _finish(host, d, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array or tensor when no dtype or
    device change is asked for."""
    if isinstance(data, Tensor):
        same_dtype = dtype is None or dtypes.to_dtype(dtype) is data.dtype
        if same_dtype and (device is None or Device(device) == data.device):
            return data
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (device is None or Device(device) is CPU):
        if dtype is None or dtypes.to_dtype(dtype).np == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A cpu tensor over the same memory as ``array`` (writes are shared both ways).

    >>> import numpy as np, ember
    >>> a = np.zeros(2, dtype=np.float32)
    >>> ember.from_numpy(a).add_(1)
    tensor([1., 1.])
    >>> a
    array([1., 1.], dtype=float32)
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    return _make_tensor(array, CPU)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` (a tensor, a NumPy array, Python data) as a tensor, sharing its memory
    where no dtype or device change is asked and ``copy`` is not True; ``copy=False``
    refuses to copy (torch.asarray's rules)."""
    shares = isinstance(obj, Tensor) or isinstance(obj, np.ndarray) and (device is None or Device(device) is CPU)
    if copy is False and not shares:
        raise ValueError(f"can't alias {type(obj).__name__} data: copy=False asks for a tensor sharing its memory")
    result = as_tensor(obj, dtype=dtype, device=device)
    if copy is False and shares and not _same_memory(result, obj):
        raise ValueError("can't alias the data with the dtype or device asked for: copy=False forbids copying")
    if copy and shares and _same_memory(result, obj):
        result = result.clone()
    if requires_grad:
        result = result.detach().requires_grad_() if result is obj else result.requires_grad_()
    return result


def _same_memory(t, obj):
    if isinstance(obj, Tensor):
        return t is obj
    return t.device is CPU and np.shares_memory(t._data, obj)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of an object with the buffer protocol (a bytearray,
    an ``array.array``, a memoryview), from byte ``offset``: ``count`` elements, or all
    that fit. Writes go through to the buffer, as torch's do."""
    d = dtypes.to_dtype(dtype)
    length = memoryview(buffer).nbytes
    if length == 0 or offset >= length and count != 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0" if length == 0 else
                         f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    itemsize = np.dtype(d.np).itemsize
    if count < 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({itemsize})")
    array = np.frombuffer(buffer, dtype=d.np, count=count, offset=offset)
    if not array.flags.writeable:
        # torch warns and lets writes through to the read-only memory; NumPy refuses them.
        warnings.warn("The given buffer is not writable: writing to this tensor raises (torch lets such writes "
                      "through). Copy the buffer, or pass a writable one (a bytearray), to write.", UserWarning,
                      stacklevel=2)
    return _make_tensor(array, CPU, requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of the default float dtype (unlike ``tensor``, even for ints)."""
    d = _float_dtype(dtype)
    return _finish(np.array(value, dtype=d.np), d, device, requires_grad)


# --- filled with a constant ------------------------------------------------------


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros, of the default float dtype unless ``dtype`` is given.

    >>> import ember
    >>> ember.zeros(2, 3).shape
    ember.Size([2, 3])
    """
    d = _float_dtype(dtype)
    return _finish(np.zeros(_shape(sizes, "zeros", size), d.np), d, device, requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones, of the default float dtype unless ``dtype`` is given."""
    d = _float_dtype(dtype)
    return _finish(np.ones(_shape(sizes, "ones", size), d.np), d, device, requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    """A tensor whose values are whatever the memory held (read none of them), laid
    out as ``memory_format`` (row-major by default)."""
    from ember.memory_format import channels_last, channels_last_3d, channels_last_strides, empty_strided_array

    d = _float_dtype(dtype)
    shape = _shape(sizes, "empty", size)
    if memory_format is channels_last or memory_format is channels_last_3d:
        return _finish(empty_strided_array(np, shape, channels_last_strides(shape), d.np), d, device, requires_grad)
    return _finish(np.empty(shape, d.np), d, device, requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of ``size`` whose element strides are ``stride``, over
    the smallest storage that holds every element it can reach (strides may overlap or
    leave gaps, as PyTorch allows)."""
    from ember.native.shape.views import restride

    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    d = _float_dtype(dtype)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    host = restride(np, np.empty(extent, d.np), size, stride)
    return _finish(host, d, device, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of ``size`` whose memory holds the dims in the order
    ``physical_layout`` (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))``
    is channels-last."""
    from ember.memory_format import contiguous_strides

    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(order) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    physical = contiguous_strides(tuple(size[d] for d in order))
    stride = [0] * len(size)
    for position, d in enumerate(order):
        stride[d] = physical[position]
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


def _fill_dtype(fill_value):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    fill_value = dtypes.python_number(fill_value)  # NOTE [ NumPy scalars are Python numbers ]
    return fill_value, dtypes.scalar_dtype(fill_value)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the
    value (bool, int64 or the default float) unless ``dtype`` is given.

    >>> import ember
    >>> ember.full((2,), 7)
    tensor([7, 7])
    """
    fill_value, inferred = _fill_dtype(fill_value)
    d = inferred if dtype is None else dtypes.to_dtype(dtype)
    fill_value = dtypes.python_float_as(fill_value, d.np, check_overflow=True)
    return _finish(np.full(_size_argument(size, "full"), fill_value, d.np), d, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """An ``n x m`` matrix (``m = n`` by default) with ones on the diagonal."""
    for name, value in (("n", n), ("m", m)):
        if value is None:
            continue
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(value).__name__}")
        if value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    d = _float_dtype(dtype)
    return _finish(np.eye(n, n if m is None else m, dtype=d.np), d, device, requires_grad)


# --- the *_like forms: shape (and by default dtype and device) of another tensor ----


def _like(t, dtype, device):
    return (t.dtype if dtype is None else dtypes.to_dtype(dtype)), (t.device if device is None else device)


def _like_layout(input, host, memory_format):
    """``host`` with the strides PyTorch's empty_like gives a tensor like ``input``
    (preserve_format by default: NOTE [ preserve_format ] in ember/memory_format.py)."""
    from ember.memory_format import contiguous_strides, suggest_strides, with_layout

    strides = suggest_strides(input, memory_format)
    return host if strides == contiguous_strides(host.shape) else with_layout(np, host, strides)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(_like_layout(input, np.zeros(input.shape, d.np), memory_format), d, dev, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(_like_layout(input, np.ones(input.shape, d.np), memory_format), d, dev, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(_like_layout(input, np.empty(input.shape, d.np), memory_format), d, dev, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    fill_value, _ = _fill_dtype(fill_value)
    fill_value = dtypes.python_float_as(fill_value, d.np, check_overflow=True)
    return _finish(_like_layout(input, np.full(input.shape, fill_value, d.np), memory_format), d, dev, requires_grad)


# --- ranges ------------------------------------------------------------------------


def _range_scalar(value):
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, np.ndarray):  # a 0-d NumPy array is no Number to PyTorch
        raise TypeError("arange(): argument must be Number, not numpy.ndarray")
    return dtypes.python_number(value)  # NOTE [ NumPy scalars are Python numbers ]


# NOTE [ arange of an integer dtype ]
# PyTorch computes an integer arange in int64 from the bounds and step truncated toward
# zero. For int64 the length comes from those truncated values too, so
# arange(0., -8.000001, -4., dtype=int64) is [0, -4] (and a step that truncates to 0
# raises ValueError); for the narrower integer dtypes the length comes from the values
# as given, so the same call with int32 is [0, -4, -8].


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    int64 when all arguments are integers, else the default float dtype. The length is
    ``ceil((end - start) / step)`` computed in double precision, so a float step may
    give one element more than expected (``arange(1, 1.3, 0.1)`` has 4), as in PyTorch.

    >>> import ember
    >>> ember.arange(5, 0, -2)
    tensor([5, 3, 1])
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_range_scalar(a) for a in (start, end, step))
    if dtype is None:
        all_ints = all(isinstance(a, int) for a in (start, end, step))
        d = dtypes.int64 if all_ints else dtypes.get_default_dtype()
    else:
        d = dtypes.to_dtype(dtype)
    if d is dtypes.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if d is dtypes.int64 and step != 0 and all(math.isfinite(a) for a in (start, end, step)):
        # NOTE [ arange of an integer dtype ]: int64 truncates all three first.
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = math.ceil((end - start) / step)
    if not d.is_floating_point:  # the length from the given values, the elements from truncated ones
        host = int(start) + np.arange(n, dtype=np.int64) * int(step)
    elif all(isinstance(a, int) for a in (start, end, step)):
        host = start + np.arange(n, dtype=np.int64) * step  # exact, even past 2**53
    else:
        host = start + np.arange(n, dtype=np.float64) * step
    return _finish(host.astype(d.np), d, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Like PyTorch, the first half counts up from ``start`` and the second half down from
    ``end`` (so both ends are exact), in the output dtype (double for integer dtypes,
    whose ``start``/``end`` are truncated first and the results truncated toward zero).
    """
    d = _float_dtype(dtype)
    start, end = _range_scalar(start), _range_scalar(end)
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    compute = np.dtype(np.float64) if not d.is_floating_point else d.np
    first = np.array(start).astype(d.np).astype(compute)
    last = np.array(end).astype(d.np).astype(compute)
    if steps <= 1:
        host = np.full(steps, first, dtype=compute)
    else:
        step = (last - first) / compute.type(steps - 1)
        index = np.arange(steps)
        halfway = steps // 2
        up = first + step * index[:halfway].astype(compute)
        down = last - step * (steps - 1 - index[halfway:]).astype(compute)
        host = np.concatenate([up, down])
    return _finish(host.astype(d.np), d, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``base ** linspace(start, end, steps)``."""
    d = _float_dtype(dtype)
    if not d.is_floating_point:  # an integer logspace starts from truncated exponents, as in PyTorch
        start, end = (int(_range_scalar(a)) for a in (start, end))
    exponents = linspace(start, end, steps, dtype=dtypes.float64)._host()
    return _finish(np.power(base, exponents).astype(d.np), d, device, requires_grad)


# --- random ----------------------------------------------------------------------
# NOTE [ Random factories are PyTorch's kernels on an empty tensor ]
# ``torch.rand(size)`` is ``torch.empty(size).uniform_()``, ``randn`` is ``normal_()``,
# ``randint`` is ``random_(low, high)``: a new contiguous tensor filled in memory order.
# ember draws the same words from the same Mersenne Twister and transforms them the same
# way (ember/native/random/transformations.py), so the same seed gives the same numbers.


def _generator(generator):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"expected an ember.Generator, got {type(generator).__name__}")
    return generator_or_default(generator)


def _check_floating(d, kernel_name):
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_legacy_name(d)}'")


def _vmap_shape(shape):
    """Inside vmap, the shape to draw and how to wrap the draw (the randomness modes:
    ember/func/batching.py); outside, ``shape`` itself."""
    if modes.vmap is None:
        return shape, None
    return modes.vmap.random_shape(shape)


def _batched(tensor, batch):
    return tensor if batch is None else batch(tensor)


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples on [0, 1), floating dtypes only; PyTorch's numbers for the same seed.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> ember.rand(3)  # torch.manual_seed(0); torch.rand(3)
    tensor([0.4963, 0.7682, 0.0885])
    """
    d = _float_dtype(dtype)
    _check_floating(d, "check_uniform_bounds")
    shape, batch = _vmap_shape(_shape(sizes, "rand", size))
    host = transformations.uniform(_generator(generator), math.prod(shape), d.np)
    return _batched(_finish(host.reshape(shape), d, device, requires_grad), batch)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples (mean 0, standard deviation 1), floating dtypes only;
    PyTorch's numbers for the same seed (NOTE [ Two Box-Muller kernels ]).

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> ember.randn(3)  # torch.manual_seed(0); torch.randn(3)
    tensor([ 1.5410, -0.2934, -2.1788])
    """
    d = _float_dtype(dtype)
    shape, batch = _vmap_shape(_shape(sizes, "randn", size))
    if d.is_complex:
        # torch draws the parts as 2n normals of the real dtype, each with variance 1/2
        parts = transformations.normal(_generator(generator), 2 * math.prod(shape), d.to_real().np,
                                       std=1 / math.sqrt(2))
        host = parts.view(d.np)
        return _batched(_finish(host.reshape(shape), d, device, requires_grad), batch)
    _check_floating(d, "normal_kernel_cpu")
    host = transformations.normal(_generator(generator), math.prod(shape), d.np)
    return _batched(_finish(host.reshape(shape), d, device, requires_grad), batch)


def _check_integer_bound(value, fn_name, position, name):
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be int, "
                        f"not {type(value).__name__}")
    return int(value)


def _check_random_range(low, high, d):
    """[low, high - 1] must be representable in ``d`` (PyTorch's check_from_to)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if d is dtypes.bool_:
        lowest, highest = 0, 1
    elif d.is_floating_point:
        # Integers are exact up to 2 ** (significand bits) in a floating type.
        lowest, highest = -(2 ** (dtypes.finfo_of(d.np).nmant + 1)), 2 ** (dtypes.finfo_of(d.np).nmant + 1)
    else:
        info = np.iinfo(d.np)
        lowest, highest = int(info.min), int(info.max)
    if not lowest <= low <= highest:
        raise RuntimeError(f"from is out of bounds for {_C_TYPE_NAMES[d.name]}")
    if not lowest <= high - 1 <= highest:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE_NAMES[d.name]}")


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers drawn uniformly from [low, high) (``randint(high, size)`` starts at 0);
    int64 unless ``dtype`` says otherwise. Each is ``word % (high - low) + low`` for one
    32-bit word (64-bit when the range needs it), PyTorch's numbers for the same seed.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> ember.randint(3, 7, (5,))  # torch.manual_seed(0); torch.randint(3, 7, (5,))
    tensor([3, 6, 4, 3, 6])
    >>> ember.randint(10, size=(2,)).shape
    ember.Size([2])
    """
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    low = _check_integer_bound(low, "randint", 1, "low")
    high = _check_integer_bound(high, "randint", 2, "high")
    shape, batch = _vmap_shape(_size_argument(size, "randint"))
    d = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    _check_random_range(low, high, d)
    host = transformations.random_from_to(_generator(generator), math.prod(shape), low, high - low)
    return _batched(_finish(host.reshape(shape).astype(d.np), d, device, requires_grad), batch)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise), the
    one PyTorch gives for the same seed (a Fisher-Yates shuffle, see transformations.py)."""
    n = _check_integer_bound(n, "randperm", 1, "n")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    if d is not dtypes.int64 and n > 0:
        highest = 2 ** (dtypes.finfo_of(d.np).nmant + 1) if d.is_floating_point else int(np.iinfo(d.np).max) + 1
        if n > highest:
            raise RuntimeError(f"n must be strictly less than the max value of {d.name} ({highest - 1}) + 1, "
                               f"but got n={n}")
    host = transformations.randperm(_generator(generator), n)
    return _finish(host.astype(d.np), d, device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return rand(tuple(input.shape), generator=generator, dtype=d, device=dev, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return randn(tuple(input.shape), generator=generator, dtype=d, device=dev, requires_grad=requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    """``randint`` with the shape (and by default the dtype) of ``input``."""
    if high is None:
        low, high = 0, low
    d, dev = _like(input, dtype, device)
    return randint(low, high, tuple(input.shape), generator=generator, dtype=d, device=dev,
                   requires_grad=requires_grad)
