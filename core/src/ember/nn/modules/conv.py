"""``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d`` and their lazy forms (``LazyConv1d`` ... ``LazyConvTranspose3d``), whose
``in_channels`` is read from the first input (ember/nn/modules/lazy.py).

PyTorch counterpart: torch/nn/modules/conv.py (v2.13).

The shared base ``_ConvNd`` owns the parameters (PyTorch's names and shapes: a
convolution's weight is ``(out, in/groups, *kernel)``, a transposed one's
``(in, out/groups, *kernel)``), the argument checks and the default initialisation;
the subclasses choose the functional form.
"""

import math

from ember.native.convolution.convolution import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from ember.native.padding import pad
from ember.nn import init
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter, UninitializedParameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value) if len(value) != 1 else tuple(value) * n
    return (value,) * n


def _empty(shape, device, dtype):
    from ember.native.factory import empty

    return empty(*shape, device=device, dtype=dtype)


class _ConvNd(Module):
    """Parameters, checks, initialisation and ``extra_repr`` of every convolution."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, dims, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, dims)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, dims)
        self.stride = _ntuple(stride, dims)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, dims)
        self.dilation = _ntuple(dilation, dims)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, dims)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._explicit_padding()
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(_empty(shape, device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _explicit_padding(self):
        """``F.pad``'s list (last dim first) for the non-zero padding modes; for 'same'
        an odd total puts the extra element on the right, as PyTorch does."""
        pads = []
        for d, k, p in zip(reversed(self.dilation), reversed(self.kernel_size),
                           reversed(_ntuple(0 if self.padding == "valid" else self.padding, len(self.kernel_size)))):
            if self.padding == "same":
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [p, p]
        return pads

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        dims = len(self.kernel_size)
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text

    def _conv_forward(self, input, weight, bias, conv):
        if self.padding_mode != "zeros":
            padded = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C_in, L)`` (or ``(C_in, L)``) with a learned
    ``weight (C_out, C_in/groups, k)`` and ``bias (C_out,)``; see
    :func:`ember.nn.functional.conv1d`.

    >>> import ember
    >>> ember.nn.Conv1d(16, 33, 3, stride=2)(ember.randn(20, 16, 50)).shape
    ember.Size([20, 33, 24])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, 1, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``) with a learned
    ``weight (C_out, C_in/groups, kh, kw)`` and ``bias (C_out,)``; see
    :func:`ember.nn.functional.conv2d`. ``padding`` may be ``'same'`` or ``'valid'``;
    ``padding_mode`` is ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Both parameters start U(-k, k) with ``k = 1 / sqrt(C_in/groups * kh * kw)``.

    >>> import ember
    >>> ember.nn.Conv2d(16, 33, 3, stride=2)(ember.randn(20, 16, 50, 100)).shape
    ember.Size([20, 33, 24, 49])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, 2, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, conv2d)


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C_in, D, H, W)`` (or ``(C_in, D, H, W)``) with a learned
    ``weight (C_out, C_in/groups, kd, kh, kw)`` and ``bias (C_out,)``; see
    :func:`ember.nn.functional.conv3d`. Arguments as :class:`Conv2d`'s.

    >>> import ember
    >>> ember.nn.Conv3d(4, 6, 3, stride=2)(ember.randn(2, 4, 9, 10, 11)).shape
    ember.Size([2, 6, 4, 4, 5])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, 3, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, conv3d)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                 dilation, padding_mode, dims, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, dims, device, dtype)

    def _output_padding(self, input, output_size):
        """The ``output_padding`` that makes the output ``output_size`` (which may
        include the batch and channel dims), checked to be reachable."""
        if output_size is None:
            return self.output_padding
        dims = len(self.kernel_size)
        output_size = list(output_size)
        if len(output_size) == dims + (input.ndim - dims):
            output_size = output_size[-dims:]
        if len(output_size) != dims:
            raise ValueError(f"ConvTranspose{dims}D: for {input.ndim}D input, output_size must have {dims} or "
                             f"{input.ndim} elements (got {len(output_size) + input.ndim - dims})")
        padding = []
        for d in range(dims):
            size = input.shape[input.ndim - dims + d]
            smallest = ((size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            largest = smallest + self.stride[d] - 1
            if not smallest <= output_size[d] <= largest:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{[smallest]} to {[largest]} (for an input of {list(input.shape[2:])})")
            padding.append(output_size[d] - smallest)
        return tuple(padding)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of :class:`Conv1d` with respect to its
    input); ``weight (C_in, C_out/groups, k)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, 1, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution ("deconvolution"), ``weight (C_in, C_out/groups, kh, kw)``;
    ``forward(input, output_size=None)`` picks ``output_padding`` to reach ``output_size``.

    >>> import ember
    >>> ember.nn.ConvTranspose2d(16, 33, 3, stride=2)(ember.randn(20, 16, 50, 100)).shape
    ember.Size([20, 33, 101, 201])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, 2, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution, ``weight (C_in, C_out/groups, kd, kh, kw)``;
    ``forward(input, output_size=None)`` as :class:`ConvTranspose2d`'s.

    >>> import ember
    >>> ember.nn.ConvTranspose3d(4, 6, 3, stride=2)(ember.randn(2, 4, 3, 4, 5)).shape
    ember.Size([2, 6, 7, 9, 11])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, 3, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class _LazyConvMixin(LazyModuleMixin):
    """The lazy forms' shared part: ``in_channels`` from the first input's channel dim."""

    def _lazy_parameters(self, out_channels, bias, device, dtype):
        self._lazy_hooks()
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        dims = len(self.kernel_size)
        if input.ndim not in (dims + 1, dims + 2):
            raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == dims + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _lazy_conv(base):
    """``__init__`` of the lazy form of the convolution class ``base``: ``in_channels`` 0 and
    uninitialized parameters until the first input."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)

    return __init__


def _lazy_conv_transpose(base):
    """As :func:`_lazy_conv`, with the transposed convolutions' arguments."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                      device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)

    return __init__


class LazyConv1d(_LazyConvMixin, Conv1d):
    """:class:`Conv1d` with ``in_channels`` from the first input; then a Conv1d."""

    cls_to_become = Conv1d
    __init__ = _lazy_conv(Conv1d)


class LazyConv2d(_LazyConvMixin, Conv2d):
    """:class:`Conv2d` with ``in_channels`` from the first input; then a Conv2d.

    >>> import ember
    >>> conv = ember.nn.LazyConv2d(8, 3)
    >>> conv(ember.ones(1, 4, 6, 6)).shape, type(conv).__name__
    (ember.Size([1, 8, 4, 4]), 'Conv2d')
    """

    cls_to_become = Conv2d
    __init__ = _lazy_conv(Conv2d)


class LazyConv3d(_LazyConvMixin, Conv3d):
    """:class:`Conv3d` with ``in_channels`` from the first input; then a Conv3d."""

    cls_to_become = Conv3d
    __init__ = _lazy_conv(Conv3d)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    """:class:`ConvTranspose1d` with ``in_channels`` from the first input."""

    cls_to_become = ConvTranspose1d
    __init__ = _lazy_conv_transpose(ConvTranspose1d)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    """:class:`ConvTranspose2d` with ``in_channels`` from the first input."""

    cls_to_become = ConvTranspose2d
    __init__ = _lazy_conv_transpose(ConvTranspose2d)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    """:class:`ConvTranspose3d` with ``in_channels`` from the first input."""

    cls_to_become = ConvTranspose3d
    __init__ = _lazy_conv_transpose(ConvTranspose3d)
