"""Deformable convolution (DCN, and DCNv2 with a mask): the function ``deform_conv2d`` and
the module ``DeformConv2d``, which call the operator ``torchvision::deform_conv2d``.

PyTorch counterpart: torchvision/ops/deform_conv.py (torchvision 0.28). The operator, its
NumPy reference kernel and its backward live in ember_vision/ops/deform_conv2d_kernel.py;
the compiled cpu kernel in deform_conv2d_compiled.py, the CUDA one in deform_conv2d_cuda.py.
"""

import math

from ember.amp import is_autocast_enabled
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember_vision.ops.deform_conv2d_kernel import deform_conv2d as deform_conv2d_op


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), mask=None):
    """Deformable 2-D convolution: each kernel tap reads the input at its usual place
    plus a learned offset, by bilinear interpolation (0 outside the image), times a
    mask value under DCNv2.

    Args:
        input: (N, C_in, H, W).
        offset: (N, 2 * offset_groups * kh * kw, H_out, W_out): (dy, dx) per tap; the
            number of offset groups is read from its channels.
        weight: (C_out, C_in / groups, kh, kw); the number of groups is read from it.
        bias: (C_out,) or None.
        stride, padding, dilation: an int or a pair.
        mask: (N, offset_groups * kh * kw, H_out, W_out) or None (DCNv1).

    Returns:
        (N, C_out, H_out, W_out).

    >>> import ember
    >>> from ember_vision.ops import deform_conv2d
    >>> x = ember.arange(9.0).reshape(1, 1, 3, 3)
    >>> deform_conv2d(x, ember.zeros(1, 8, 2, 2), ember.ones(1, 1, 2, 2))  # no offset: a plain convolution
    tensor([[[[ 8., 12.],
              [20., 24.]]]])
    """
    stride_h, stride_w = _pair(stride)
    pad_h, pad_w = _pair(padding)
    dilation_h, dilation_w = _pair(dilation)
    weights_h, weights_w = weight.shape[-2:]
    n_in_channels = input.shape[1]
    offset_groups = offset.shape[1] // (2 * weights_h * weights_w)
    groups = n_in_channels // weight.shape[1] if weight.shape[1] else 0
    _check(input, offset, weight, bias, mask, offset_groups)
    return deform_conv2d_op(
        input, weight, offset, mask, bias,
        stride_h=stride_h, stride_w=stride_w, pad_h=pad_h, pad_w=pad_w,
        dilation_h=dilation_h, dilation_w=dilation_w,
        groups=groups, offset_groups=offset_groups, use_mask=mask is not None)


def _check(input, offset, weight, bias, mask, offset_groups):
    """What torchvision's Python function checks before calling the op (the op's kernel
    checks the rest), and that every tensor has the input's dtype, except inside an
    autocast region, whose kernel casts them all to float32 (ember_vision/ops/autocast.py)."""
    if offset_groups == 0:
        taps = 2 * weight.shape[-2] * weight.shape[-1]
        raise RuntimeError("the shape of the offset tensor at dimension 1 is not valid. It should be a multiple "
                           "of 2 * weight.size[2] * weight.size[3].\n"
                           f"Got offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * weight.size[3]={taps}")
    if is_autocast_enabled(input.device.type):
        return
    for name, tensor in (("offset", offset), ("weight", weight), ("bias", bias), ("mask", mask)):
        if tensor is not None and tensor.dtype != input.dtype:
            raise RuntimeError(f"expected {name} to have the input's dtype {input.dtype}, but got {tensor.dtype}")


class DeformConv2d(Module):
    """A deformable convolution layer: its weight and bias, with the offsets (and mask)
    given to ``forward``, usually by a plain ``Conv2d`` over the same input.

    Args: as ``torchvision.ops.DeformConv2d``: in_channels, out_channels, kernel_size,
    stride=1, padding=0, dilation=1, groups=1, bias=True.

    >>> import ember
    >>> from ember_vision.ops import DeformConv2d
    >>> layer = DeformConv2d(4, 6, 3, padding=1)
    >>> layer(ember.randn(2, 4, 5, 5), ember.zeros(2, 18, 5, 5)).shape
    ember.Size([2, 6, 5, 5])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        from ember.native.factory import empty

        self.weight = Parameter(empty(out_channels, in_channels // groups, *self.kernel_size))
        if bias:
            self.bias = Parameter(empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """torchvision's (and ``Conv2d``'s) initialisation: Kaiming-uniform weight with
        ``a = sqrt(5)``, bias uniform in ``(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input, offset, mask=None):
        """``input`` (N, C_in, H, W), ``offset`` (N, 2 * offset_groups * kh * kw, H_out,
        W_out), ``mask`` (N, offset_groups * kh * kw, H_out, W_out) or None."""
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride, padding=self.padding,
                             dilation=self.dilation, mask=mask)

    def __repr__(self):
        text = (f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        text += f", padding={self.padding}" if self.padding != (0, 0) else ""
        text += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        text += f", groups={self.groups}" if self.groups != 1 else ""
        text += ", bias=False" if self.bias is None else ""
        return text + ")"
