"""A convolution with nothing to convolve: an input with an empty batch or no channels.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp (``ConvBackend::Empty`` in
``_convolution`` and ``convolution_backward``) (v2.13).
"""

from ember.memory_format import contiguous_strides, empty_strided_array, preserved_strides
from ember.native.convolution.arguments import transposed_shape

# NOTE [ A convolution with nothing to convolve ]
# PyTorch sends an input with no images (N == 0) or no channels (C == 0) to none of
# its kernels. With channels, the output is the input times one weight element, viewed
# to the output shape, so its layout is the input's when the shapes agree (a padded
# 3x3 convolution of an empty channels_last batch stays channels_last) and row-major
# otherwise. An input with no channels is flattened first, so its output is always
# row-major, and it has no channels either, whatever the weight and bias (torch 2.13's
# (N, 0, H_out, W_out)). The gradients are zeros laid out like the input, the weight
# and the bias. ember follows all of it; other inputs with no elements never get here
# (the checks refuse a spatial size smaller than the kernel).


def is_empty_convolution(x):
    return x.shape[0] == 0 or x.shape[1] == 0


def _output_shape(x, weight, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        shape = transposed_shape(x.shape, weight.shape, stride, padding, dilation, output_padding, groups)
    else:
        spatial = tuple((size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, s, p, d
                        in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation))
        shape = (x.shape[0], weight.shape[0]) + spatial
    return shape if x.shape[1] else (shape[0], 0) + shape[2:]


def _strides(a):
    """``Tensor.stride()`` of an array: all-zero strides of an empty one mean row-major
    (NOTE [ The strides of an empty tensor ])."""
    strides = tuple(s // a.itemsize for s in a.strides)
    return strides if any(strides) or a.size else contiguous_strides(a.shape)


def empty_forward(xp, x, weight, stride, padding, dilation, transposed, output_padding, groups):
    """The (empty) output of a convolution of ``x`` (N == 0 or C == 0)."""
    shape = _output_shape(x, weight, stride, padding, dilation, transposed, output_padding, groups)
    strides = _strides(x) if shape == x.shape and x.shape[1] else contiguous_strides(shape)
    return empty_strided_array(xp, shape, strides, x.dtype)


def empty_backward(xp, grad, x, weight, transposed, groups, output_mask):
    """(grad_input, grad_weight, grad_bias): zeros laid out like the input and the
    weight, and a bias gradient of the weight's output channels, even where the output
    has none; an empty placeholder where ``output_mask`` asks for nothing."""
    nothing = xp.empty((0,), dtype=grad.dtype)
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    return (_zeros_like(xp, x) if output_mask[0] else nothing,
            _zeros_like(xp, weight) if output_mask[1] else nothing,
            xp.zeros(out_channels, dtype=grad.dtype) if output_mask[2] else nothing)


def _zeros_like(xp, a):
    """``zeros_like(a)`` in ``a``'s layout (preserve_format)."""
    out = empty_strided_array(xp, a.shape, preserved_strides(a.shape, _strides(a)), a.dtype)
    out[...] = 0
    return out
