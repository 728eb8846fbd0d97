"""A convolution's arguments: each size argument expanded to one value per spatial
dimension, the checks every call runs first, with PyTorch's messages, and the output
shape of a transposed convolution, which the checks and the kernels both need.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp (``expand_param_if_needed``,
``check_shape_forward``) (v2.13).
"""

from functools import lru_cache

from ember.amp.state import autocast_state
from ember.dtypes import C_TYPE_NAMES, from_numpy_dtype


def transposed_shape(shape, weight_shape, stride, padding, dilation, output_padding, groups):
    """The ``(N, C_out, *spatial)`` output of a transposed convolution of an input of
    ``shape``."""
    spatial = tuple((size - 1) * s - 2 * p + d * (k - 1) + op + 1 for size, k, s, p, d, op
                    in zip(shape[2:], weight_shape[2:], stride, padding, dilation, output_padding))
    return (shape[0], weight_shape[1] * groups) + spatial


def expand(value, dims, name):
    if isinstance(value, int):
        return (value,) * dims
    value = tuple(value)
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match "
                           f"the convolution dimensions, but got {name}={list(value)}")
    return value


def shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_convolution(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups):
    """Raise PyTorch's error for the first thing wrong with a convolution's arguments.
    The checks read only shapes, dtypes and the size arguments, so they run once per
    distinct set of those (NOTE [ A convolution's fixed cost, cached per shape ] in
    ember/native/convolution/convolution.py): a set that passed passes again; one that
    failed is not cached and raises again."""
    x, w = input._data, weight._data
    b = None if bias is None else bias._data
    _check(x.shape, x.dtype, w.shape, w.dtype,
           None if b is None else b.shape, None if b is None else b.dtype,
           stride, padding, dilation, bool(transposed), output_padding, groups,
           autocast_state.enabled)


@lru_cache(maxsize=1024)
def _check(input_shape, input_dtype, weight_shape, weight_dtype, bias_shape, bias_dtype, stride, padding,
           dilation, transposed, output_padding, groups, autocasting):
    input_ndim, weight_ndim = len(input_shape), len(weight_shape)
    if weight_ndim != input_ndim:
        raise RuntimeError(f"Expected {weight_ndim}-dimensional input for {weight_ndim}-dimensional weight "
                           f"{shape_str(weight_shape)}, but got {input_ndim}-dimensional input of size "
                           f"{shape_str(input_shape)} instead")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight_shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {shape_str(weight_shape)} instead")
    if weight_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{shape_str(weight_shape)}] instead")
    if input_dtype != weight_dtype and not autocasting:  # autocast: the dispatcher casts both
        raise RuntimeError(f"expected scalar type {_scalar_name(from_numpy_dtype(input_dtype))} but found "
                           f"{_scalar_name(from_numpy_dtype(weight_dtype))}")
    if bias_shape is not None and bias_dtype != input_dtype and not autocasting:
        raise RuntimeError(f"Input type ({_type_name(from_numpy_dtype(input_dtype))}) and bias type "
                           f"({_type_name(from_numpy_dtype(bias_dtype))}) "
                           "should be the same")
    channels = input_shape[1]
    if not transposed:
        expected = weight_shape[1] * groups
        out_channels = weight_shape[0]
    else:
        expected = weight_shape[0]
        out_channels = weight_shape[1] * groups
        for op, s, d in zip(output_padding, stride, dilation):
            if op >= s and op >= d:
                names = ("height", "width") if len(stride) == 2 else ("width",)
                parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
                raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                   + " ".join(parts))
    if channels != expected:
        raise RuntimeError(f"{_where(weight_shape, transposed, groups)}, expected input{shape_str(input_shape)} to "
                           f"have {expected} channels, but got {channels} channels instead")
    if bias_shape is not None and tuple(bias_shape) != (out_channels,):
        where = _where(weight_shape, transposed, groups).replace(f"groups={groups}, ", "")
        raise RuntimeError(f"{where}, expected bias to be 1-dimensional with {out_channels} elements, but got "
                           f"bias of size {shape_str(bias_shape)} instead")
    if not transposed:
        padded = [size + 2 * p for size, p in zip(input_shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight_shape[2:], dilation)]
        if any(k > p for k, p in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                               "actual input size")
    else:
        out = transposed_shape(input_shape, weight_shape, stride, padding, dilation, output_padding, groups)
        if min(out[2:]) <= 0:
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input_shape[2:]))}). "
                               f"Calculated output size per channel: ({' x '.join(map(str, out[2:]))}). "
                               "Output size is too small")


def _where(weight_shape, transposed, groups):
    """The opening of PyTorch's channel-count messages, formatted only for an error."""
    setting = "transposed=1" if transposed else f"groups={groups}"
    return f"Given {setting}, weight of size {shape_str(weight_shape)}"


def _type_name(dtype):
    """The C++ name PyTorch prints for a dtype in its type-mismatch messages."""
    name = str(dtype).split(".")[-1]
    return C_TYPE_NAMES.get(name, name)


def _scalar_name(dtype):
    from ember.native.support._inplace import _type_name as torch_scalar_name

    return torch_scalar_name(dtype)
