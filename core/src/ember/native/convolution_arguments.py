"""A convolution's arguments: each size argument expanded to one value per spatial
dimension, the checks every call runs first, with PyTorch's messages, and the output
shape of a transposed convolution, which the checks and the kernels both need.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp (``expand_param_if_needed``,
``check_shape_forward``) (v2.13).
"""

from ember.amp.state import autocast_state
from ember.dtypes import C_TYPE_NAMES


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


def check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{shape_str(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{shape_str(input.shape)} instead")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {shape_str(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{shape_str(weight.shape)}] instead")
    if input.dtype != weight.dtype and not autocast_state.enabled:  # autocast: the dispatcher casts both
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found "
                           f"{_scalar_name(weight.dtype)}")
    if bias is not None and bias.dtype != input.dtype and not autocast_state.enabled:
        raise RuntimeError(f"Input type ({_type_name(input.dtype)}) and bias type ({_type_name(bias.dtype)}) "
                           "should be the same")
    channels = input.shape[1]
    if not transposed:
        expected = weight.shape[1] * groups
        out_channels = weight.shape[0]
    else:
        expected = weight.shape[0]
        out_channels = weight.shape[1] * groups
        for op, s, d in zip(output_padding, stride, dilation):
            if op >= s and op >= d:
                names = ("height", "width") if len(stride) == 2 else ("width",)
                parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
                raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                   + " ".join(parts))
    if channels != expected:
        raise RuntimeError(f"{_where(weight, transposed, groups)}, expected input{shape_str(input.shape)} to "
                           f"have {expected} channels, but got {channels} channels instead")
    if bias is not None and tuple(bias.shape) != (out_channels,):
        where = _where(weight, transposed, groups).replace(f"groups={groups}, ", "")
        raise RuntimeError(f"{where}, expected bias to be 1-dimensional with {out_channels} elements, but got "
                           f"bias of size {shape_str(bias.shape)} instead")
    if not transposed:
        padded = [size + 2 * p for size, p in zip(input.shape[2:], padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if any(k > p for k, p in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                               "actual input size")
    else:
        out = transposed_shape(input.shape, weight.shape, stride, padding, dilation, output_padding, groups)
        if min(out[2:]) <= 0:
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). "
                               f"Calculated output size per channel: ({' x '.join(map(str, out[2:]))}). "
                               "Output size is too small")


def _where(weight, transposed, groups):
    """The opening of PyTorch's channel-count messages, formatted only for an error."""
    setting = "transposed=1" if transposed else f"groups={groups}"
    return f"Given {setting}, weight of size {shape_str(weight.shape)}"


def _type_name(dtype):
    """The C++ name PyTorch prints for a dtype in its type-mismatch messages."""
    name = str(dtype).split(".")[-1]
    return C_TYPE_NAMES.get(name, name)


def _scalar_name(dtype):
    from ember.native._inplace import _type_name as torch_scalar_name

    return torch_scalar_name(dtype)
