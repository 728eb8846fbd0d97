"""3-D convolution by im2col over volumes ("vol2col"): the reference kernels of ``conv3d``,
``conv_transpose3d`` and their gradients.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM3d.cpp (``slow_conv3d``: vol2col
and one GEMM), NaiveConvolutionTranspose3d.cpp and vol2col.h (v2.13).

The same three products as the 2-D reference in convolution.py (NOTE [ Convolution as a
bilinear map ]), written once for any number of spatial dims, so a reader sees the
2-D code's shape with one more index:

    columns  (groups, C/g * kd*kh*kw, N * OD*OH*OW)    every window of every volume, one column
    forward  W (groups, O/g, C/g*kd*kh*kw) @ columns     then back to (N, O, OD, OH, OW)
    input's gradient   W^T @ rows, each tap's slab added back where its windows read (col2vol)
    weight's gradient  rows @ columns^T

A transposed convolution is the input adjoint of the convolution it transposes, as in
2-D. No faster algorithm is chosen for 3-D (NOTE [ Choosing a convolution algorithm ]
in algorithm.py): every 3-D product runs these kernels.
"""

import itertools
from functools import lru_cache

from ember.native.fold import strided_view, window_count


class VolumeGeometry:
    """Sizes of one windowed pass over ``(N, C, *spatial)`` inputs: per spatial dim the
    kernel, stride, padding, dilation, the number of windows ``out`` and the padded
    extent the windows reach. Plain tuples of ints, never changed once made."""

    __slots__ = ("N", "C", "spatial", "kernel", "stride", "padding", "dilation", "out", "padded_size")

    def __init__(self, shape, kernel, stride, padding, dilation, out_size=None):
        self.N, self.C, self.spatial = shape[0], shape[1], tuple(shape[2:])
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        if out_size is None:
            out_size = tuple(window_count(*sizes) for sizes in zip(self.spatial, kernel, stride, padding, dilation))
        self.out = tuple(out_size)
        # a transposed convolution's windows may reach past size + 2p (its output_padding)
        self.padded_size = tuple(max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1) for n, k, s, p, d, o
                                 in zip(self.spatial, kernel, stride, padding, dilation, self.out))

    @property
    def L(self):
        """Windows per volume (``OD*OH*OW``)."""
        count = 1
        for o in self.out:
            count *= o
        return count

    @property
    def taps(self):
        """Kernel taps per channel (``kd*kh*kw``)."""
        count = 1
        for k in self.kernel:
            count *= k
        return count

    def inside(self):
        """The index of the unpadded input inside the padded buffer."""
        return (slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(self.padding, self.spatial))

    def tap_region(self, tap):
        """The index of the padded buffer that tap ``(a, b, c)`` reads across all windows."""
        return (slice(None), slice(None)) + tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, s, d, o
                                                  in zip(tap, self.stride, self.dilation, self.out))


@lru_cache(maxsize=1024)
def volume_geometry(shape, kernel, stride, padding, dilation, out_size=None):
    """The :class:`VolumeGeometry` of these sizes (tuples of ints), made once per set."""
    return VolumeGeometry(shape, kernel, stride, padding, dilation, out_size)


def _padded(xp, x, g):
    if g.padded_size == g.spatial:
        return x
    buffer = xp.zeros((x.shape[0], x.shape[1]) + g.padded_size, dtype=x.dtype)
    buffer[g.inside()] = x
    return buffer


def columns(xp, x, g, groups):
    """vol2col: ``(groups, C/g * taps, N * L)``, the windows of the padded input as a
    strided view ``(N, C, *kernel, *out)`` (NOTE [ Windows as strided views ] in
    ember/native/fold.py), laid out channel and tap first."""
    plane = xp.ascontiguousarray(_padded(xp, x, g))
    N, C = plane.shape[:2]
    spatial_strides = plane.strides[2:]
    shape = (N, C) + g.kernel + g.out
    strides = (plane.strides[:2] + tuple(d * st for d, st in zip(g.dilation, spatial_strides))
               + tuple(s * st for s, st in zip(g.stride, spatial_strides)))
    windows = strided_view(xp, plane, shape, strides)
    dims = len(g.kernel)
    order = (1,) + tuple(range(2, 2 + dims)) + (0,) + tuple(range(2 + dims, 2 + 2 * dims))  # (C, *kernel, N, *out)
    return windows.transpose(order).reshape(groups, C // groups * g.taps, N * g.L)


def _grouped(weight, groups):
    """``(O, C/g, *kernel)`` -> ``(groups, O/g, C/g * taps)``: one matrix per group."""
    return weight.reshape(groups, weight.shape[0] // groups, -1)


def channel_major(grad, groups):
    """``(N, O, *out)`` -> ``(groups, O/g, N * L)``: the layout of a product's result."""
    N, O = grad.shape[:2]
    return grad.swapaxes(0, 1).reshape(groups, O // groups, -1)


def _volumes(xp, rows, N, g):
    """``(groups, O/g, N * L)`` -> a C-contiguous ``(N, O, *out)``."""
    O = rows.shape[0] * rows.shape[1]
    return xp.ascontiguousarray(rows.reshape((O, N) + g.out).swapaxes(0, 1))


def forward(xp, x, weight, bias, g, groups):
    """F(x, W) + bias: ``(N, C, *spatial)`` -> ``(N, O, *out)``."""
    y = _volumes(xp, xp.matmul(_grouped(weight, groups), columns(xp, x, g, groups)), x.shape[0], g)
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * len(g.out))
    return y


def input_adjoint(xp, grad, weight, g, groups):
    """F(., W)^T grad: the columns ``W^T @ rows``, each tap's slab of them
    added back into a zero padded buffer where that tap's windows read
    (col2vol), then the padding cut off."""
    w_t = _grouped(weight, groups).transpose(0, 2, 1)  # (groups, C/g * taps, O/g)
    cols = xp.matmul(w_t, channel_major(grad, groups))
    channels = weight.shape[1] * groups
    taps = cols.reshape((channels,) + g.kernel + (g.N,) + g.out)
    buffer = xp.zeros((g.N, channels) + g.padded_size, dtype=grad.dtype)
    for tap in itertools.product(*(range(k) for k in g.kernel)):
        region = buffer[g.tap_region(tap)]
        slab = taps[(slice(None),) + tap].swapaxes(0, 1)
        xp.add(region, slab, out=region)  # in place, no write-back
    return xp.ascontiguousarray(buffer[g.inside()])


def weight_adjoint(xp, x, grad, weight_shape, g, groups):
    """F(x, .)^T grad: the output gradient's rows against vol2col(x)."""
    cols = columns(xp, x, g, groups)
    return xp.matmul(channel_major(grad, groups), cols.transpose(0, 2, 1)).reshape(weight_shape)


def bias_gradient(grad):
    """``grad`` summed over every dim but the channels."""
    return grad.sum(axis=(0,) + tuple(range(2, grad.ndim)))
