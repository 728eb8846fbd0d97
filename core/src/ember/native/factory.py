"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``randn``, the ``*_like`` forms.

PyTorch counterpart: aten/src/ATen/native/TensorFactories.cpp and
torch/csrc/utils/tensor_new.cpp (inferring dtype from Python data) (v2.13).

Factories build the array on the host with NumPy, in the requested dtype, then hand it
to the device's backend; random factories draw from an ``ember.Generator``.
"""

import math

import numpy as np

from ember import dtypes
from ember.device import CPU, device as Device
from ember.random import generator_or_default
from ember.tensor import Tensor, _make_tensor


def _device(device):
    return CPU if device is None else Device(device)


def _finish(host_array, dtype, device, requires_grad):
    dev = _device(device)
    array = dev.backend.from_host(host_array, dev.index)
    t = _make_tensor(array, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data):
    """The dtype PyTorch gives Python data: bool, int64, or the default float."""
    kinds = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kinds.add(x.dtype.category)
        elif isinstance(x, bool) or isinstance(x, np.bool_):
            kinds.add(dtypes.BOOL)
        elif isinstance(x, (int, np.integer)):
            kinds.add(dtypes.INTEGRAL)
        elif isinstance(x, (float, np.floating)):
            kinds.add(dtypes.FLOATING)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    if dtypes.FLOATING in kinds:
        return dtypes.get_default_dtype()
    if dtypes.INTEGRAL in kinds:
        return dtypes.int64
    if dtypes.BOOL in kinds:
        return dtypes.bool_
    return dtypes.get_default_dtype()  # empty list


def _to_host_nested(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        return [_to_host_nested(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy ``data`` (nested lists, a scalar, a NumPy array or a tensor) into a new tensor.

    Python floats become the default dtype (float32), ints int64, bools bool; a NumPy
    array keeps its dtype.

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype
    ember.int64
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
    if isinstance(data, np.ndarray):
        d = dtypes.from_numpy_dtype(data.dtype) if dtype is None else dtypes.to_dtype(dtype)
        host = np.array(data, dtype=d.np, order="C", copy=True)
    else:
        d = _infer_dtype(data) if dtype is None else dtypes.to_dtype(dtype)
        if isinstance(data, np.generic):
            d = dtypes.from_numpy_dtype(data.dtype) if dtype is None else d
        host = np.array(_to_host_nested(data), dtype=d.np)
    if requires_grad and not d.is_floating_point:
        raise RuntimeError("Only Tensors of floating point dtype can require gradients")
    return _finish(host, d, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can."""
    if isinstance(data, Tensor):
        if (dtype is None or dtypes.to_dtype(dtype) is data.dtype) and (device is None or Device(device) == data.device):
            return data
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (device is None or Device(device) is CPU):
        if dtype is None or dtypes.to_dtype(dtype).np == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A cpu tensor over the same memory as ``array`` (writes are shared both ways)."""
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


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(int(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _float_dtype(dtype):
    return dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    return _finish(np.zeros(_shape(size), d.np), d, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    return _finish(np.ones(_shape(size), d.np), d, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None):
    d = _float_dtype(dtype)
    return _finish(np.empty(_shape(size), d.np), d, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    d = dtypes.scalar_dtype(fill_value) if dtype is None else dtypes.to_dtype(dtype)
    return _finish(np.full(_shape((size,)), fill_value, d.np), d, device, requires_grad)


def _like(t, dtype, device):
    return (t.dtype if dtype is None else dtypes.to_dtype(dtype)), (t.device if device is None else device)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(np.zeros(input.shape, d.np), d, dev, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(np.ones(input.shape, d.np), d, dev, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(np.empty(input.shape, d.np), d, dev, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    d, dev = _like(input, dtype, device)
    return _finish(np.full(input.shape, fill_value, d.np), d, dev, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` by ``step``; int64 when all
    arguments are integers, else the default float dtype."""
    if end is None:
        start, end = 0, start
    args = [start, end, step]
    args = [a.item() if isinstance(a, Tensor) else a for a in args]
    start, end, step = args
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        d = dtypes.int64 if all(isinstance(a, int) for a in args) else dtypes.get_default_dtype()
    else:
        d = dtypes.to_dtype(dtype)
    n = math.ceil((end - start) / step)
    # Computed in float64 then cast, like PyTorch: start + i * step.
    host = (start + np.arange(n, dtype=np.float64) * step) if d.is_floating_point else (start + np.arange(n) * step)
    return _finish(host.astype(d.np), d, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    host = np.linspace(start, end, steps, dtype=np.float64)
    if not d.is_floating_point:
        host = np.floor(host) if start <= end else np.ceil(host)
    return _finish(host.astype(d.np), d, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    host = np.power(base, np.linspace(start, end, steps, dtype=np.float64))
    return _finish(host.astype(d.np), d, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    return _finish(np.eye(n, n if m is None else m, dtype=d.np), d, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples on [0, 1)."""
    d = _float_dtype(dtype)
    host = generator_or_default(generator).numpy.random(_shape(size), dtype=np.float64).astype(d.np)
    return _finish(host, d, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    d = _float_dtype(dtype)
    host = generator_or_default(generator).numpy.standard_normal(_shape(size)).astype(d.np)
    return _finish(host, d, device, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers drawn uniformly from [low, high); int64 unless ``dtype`` says otherwise."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    host = generator_or_default(generator).numpy.integers(low, high, size=_shape((size,))).astype(d.np)
    return _finish(host, d, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    host = generator_or_default(generator).numpy.permutation(n).astype(d.np)
    return _finish(host, d, device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    d, dev = _like(input, dtype, device)
    return rand(*input.shape, generator=generator, dtype=d, device=dev, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    d, dev = _like(input, dtype, device)
    return randn(*input.shape, generator=generator, dtype=d, device=dev, requires_grad=requires_grad)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    d, dev = _like(input, dtype, device)
    return randint(low, high, tuple(input.shape), generator=generator, dtype=d, device=dev)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False):
    d = _float_dtype(dtype)
    return _finish(np.array(value, dtype=d.np), d, device, requires_grad)
