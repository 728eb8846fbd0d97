"""Pooling over volumes: ``max_pool3d`` (with indices), ``avg_pool3d``,
``adaptive_avg_pool3d`` and ``adaptive_max_pool3d``.

PyTorch counterpart: aten/src/ATen/native/DilatedMaxPool3d.cpp, AveragePool3d.cpp,
AdaptiveAveragePooling3d.cpp, AdaptiveMaxPooling3d.cpp, Pool.h (checks) and
derivatives.yaml (v2.13).

The kernels are the 2-D ones' plain form (ember/native/pooling/pooling.py) with one more
index: a loop over the ``kd*kh*kw`` taps of the window, each a strided slice of the padded
input covering every window at once (``VolumeGeometry.tap_region``, from the 3-D
convolution's vol2col). Max pooling keeps, per window, the first inside tap and moves to a
later one only for a strictly greater value or a NaN (torch's rule), and returns it as a
flat index into the ``D*H*W`` volume; its backward adds each gradient there (a
``scatter_add``, whose own backward is a ``gather``). Average pooling's backward spreads
each gradient over its window's taps and its double backward is the pooling again.
Adaptive average pooling is separable: one small averaging matrix per dim.
"""

import itertools

import numpy as np

from ember.dispatcher import NONE, Op
from ember.dtypes import is_floating_array
from ember.native.convolution.volumes import volume_geometry
from ember.native.fold import window_count
from ember.native.pooling.pooling import _fill_low, _scalar_name, adaptive_ranges, window_spans


def _geometry(shape, kernel_size, stride, padding, dilation, ceil_mode):
    out = tuple(window_count(n, k, s, p, d, ceil_mode) for n, k, s, p, d
                in zip(shape[2:], kernel_size, stride, padding, dilation))
    return volume_geometry(tuple(shape), kernel_size, stride, padding, dilation, out)


def _padded(xp, x, g, fill):
    plane = xp.full((x.shape[0], x.shape[1]) + g.padded_size, fill, dtype=x.dtype)
    plane[g.inside()] = x
    return plane


def _taps(g):
    return itertools.product(*(range(k) for k in g.kernel))


def _window_starts(g):
    """Per dim, where each window starts in the unpadded input (negative in the padding)."""
    return [np.arange(o) * s - p for o, s, p in zip(g.out, g.stride, g.padding)]


def _flat(g, d, h, w):
    """Flat index into a ``(D, H, W)`` volume, broadcast over per-dim index arrays."""
    D, H, W = g.spatial
    return (d[:, None, None] * H + h[None, :, None]) * W + w[None, None, :]


# --- max pooling ---------------------------------------------------------------------


def _max_pool3d_kernel(xp, x, kernel_size, stride, padding, dilation, ceil_mode):
    g = _geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    fill = _fill_low(xp, x.dtype)
    plane = _padded(xp, x, g, fill)
    starts = _window_starts(g)
    # each window's first tap inside the input: its index until a tap beats it
    first = [start + -(-np.maximum(-start, 0) // d) * d for start, d in zip(starts, g.dilation)]
    best = xp.full((x.shape[0], x.shape[1]) + g.out, fill, dtype=x.dtype)
    indices = xp.broadcast_to(xp.asarray(_flat(g, *first)), best.shape).copy()
    nan_wins = is_floating_array(x.dtype)
    for tap in _taps(g):
        values = plane[g.tap_region(tap)]
        wins = values > best
        if nan_wins:
            wins |= xp.isnan(values)
        best = xp.where(wins, values, best)
        offsets = [start + t * d for start, t, d in zip(starts, tap, g.dilation)]
        indices = xp.where(wins, xp.asarray(_flat(g, *offsets)), indices)
    return best, indices


def _scatter_to_volumes(grad, indices, shape):
    """Add ``grad`` into zeros of ``shape`` at the flat per-volume ``indices``."""
    from ember.native.factory import zeros

    volumes = zeros(tuple(shape[:-3]) + (shape[-3] * shape[-2] * shape[-1],), dtype=grad.dtype, device=grad.device)
    return volumes.scatter_add(-1, indices.flatten(-3), grad.flatten(-3)).view(tuple(shape))


def _indexed_backward(ctx, grad, grad_indices):
    _, indices = ctx.saved_outputs
    return (_scatter_to_volumes(grad, indices, ctx.input_meta[0][0]),)


MAX_POOL3D = Op("aten::max_pool3d_with_indices", _max_pool3d_kernel, _indexed_backward, promote=NONE,
                save="outputs", num_outputs=2, backward_name="MaxPool3DWithIndicesBackward0")


# --- average pooling -----------------------------------------------------------------


def _divisor(g, count_include_pad, divisor_override, dtype):
    """How many elements each window averages, an ``(OD, OH, OW)`` array (or the override)."""
    if divisor_override is not None:
        return divisor_override  # a Python number: the result keeps the input's dtype
    spans = [window_spans(o, n, k, s, p, count_include_pad) for o, n, k, s, p
             in zip(g.out, g.spatial, g.kernel, g.stride, g.padding)]
    return (spans[0][:, None, None] * spans[1][None, :, None] * spans[2][None, None, :]).astype(dtype)


def _avg_pool3d_kernel(xp, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    g = _geometry(x.shape, kernel_size, stride, padding, (1, 1, 1), ceil_mode)
    plane = _padded(xp, x, g, 0)
    total = xp.zeros((x.shape[0], x.shape[1]) + g.out, dtype=x.dtype)
    for tap in _taps(g):
        total += plane[g.tap_region(tap)]
    divisor = _divisor(g, count_include_pad, divisor_override, x.dtype)
    if not is_floating_array(x.dtype):
        return xp.trunc(total / divisor).astype(x.dtype)  # C++ division truncates
    return total / divisor


def _avg_pool3d_backward_kernel(xp, grad, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override):
    g = _geometry(input_size, kernel_size, stride, padding, (1, 1, 1), ceil_mode)
    share = grad / _divisor(g, count_include_pad, divisor_override, grad.dtype)
    plane = xp.zeros(tuple(input_size[:2]) + g.padded_size, dtype=grad.dtype)
    for tap in _taps(g):
        plane[g.tap_region(tap)] += share
    return xp.ascontiguousarray(plane[g.inside()])


def _avg_pool3d_backward(ctx, grad):
    return (AVG_POOL3D_BACKWARD(grad, input_size=ctx.input_meta[0][0], **ctx.attrs),)


def _avg_pool3d_double_backward(ctx, grad):
    attrs = {k: v for k, v in ctx.attrs.items() if k != "input_size"}
    return (AVG_POOL3D(grad, **attrs),)


AVG_POOL3D = Op("aten::avg_pool3d", _avg_pool3d_kernel, _avg_pool3d_backward, promote=NONE)
AVG_POOL3D_BACKWARD = Op("aten::avg_pool3d_backward", _avg_pool3d_backward_kernel, _avg_pool3d_double_backward,
                         promote=NONE)


# --- adaptive pooling ----------------------------------------------------------------


def _adaptive_max_pool3d_kernel(xp, x, output_size):
    """Each window gathered whole (windows shorter than the longest repeat their last
    element, harmless for a max), then the first maximum of each."""
    gathers = []
    for size, out in zip(x.shape[-3:], output_size):
        start, end = adaptive_ranges(size, out)
        width = int((end - start).max()) if out else 1
        gathers.append(np.minimum(start[:, None] + np.arange(width), end[:, None] - 1))
    d, h, w = gathers
    windows = x[..., d[:, :, None, None, None, None], h[None, None, :, :, None, None], w[None, None, None, None]]
    windows = windows.transpose(0, 1, 2, 4, 6, 3, 5, 7)  # (N, C, OD, OH, OW, kd, kh, kw)
    windows = windows.reshape(windows.shape[:5] + (-1,))
    choice = windows.argmax(axis=-1)
    out = xp.take_along_axis(windows, choice[..., None], axis=-1)[..., 0]
    kh, kw = h.shape[1], w.shape[1]
    od, oh, ow = np.ogrid[:d.shape[0], :h.shape[0], :w.shape[0]]
    depth = xp.asarray(d)[od, choice // (kh * kw)]
    row = xp.asarray(h)[oh, choice // kw % kh]
    column = xp.asarray(w)[ow, choice % kw]
    H, W = x.shape[-2:]
    return out, (depth * H + row) * W + column


ADAPTIVE_MAX_POOL3D = Op("aten::adaptive_max_pool3d", _adaptive_max_pool3d_kernel, _indexed_backward,
                         promote=NONE, save="outputs", num_outputs=2)


# --- public functions ----------------------------------------------------------------


def _triple(value):
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(value)
    return value * 3 if len(value) == 1 else value


def _pool3d_args(kernel_size, stride, padding, dilation):
    kernel_size = _triple(kernel_size)
    no_stride = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    return kernel_size, kernel_size if no_stride else _triple(stride), _triple(padding), _triple(dilation)


def _batched(input):
    if input.ndim not in (4, 5) or input.numel() == 0 and input.ndim == 4:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def _check_windows(input, kernel_size, stride, padding, dilation):
    if min(kernel_size) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kT: {} kH: {} kW: {}".format(
            *kernel_size))
    if min(stride) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationT: {} dilationH: {} "
                           "dilationW: {}".format(*dilation))
    for k, p, d in zip(kernel_size, padding, dilation):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kd x kh x kw`` window of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``),
    with implicit ``-inf`` padding; with ``return_indices`` also its flat position in the
    ``D*H*W`` volume.

    >>> import ember
    >>> ember.nn.functional.max_pool3d(ember.arange(8.).view(1, 1, 2, 2, 2), 2).tolist()
    [[[[[7.0]]]]]
    """
    kernel_size, stride, padding, dilation = _pool3d_args(kernel_size, stride, padding, dilation)
    _check_windows(input, kernel_size, stride, padding, dilation)
    batched, unbatched = _batched(input)
    out = [window_count(n, k, s, p, d, ceil_mode) for n, k, s, p, d
           in zip(input.shape[-3:], kernel_size, stride, padding, dilation)]
    if min(out) < 1:
        C, D, H, W = input.shape[-4:]
        raise RuntimeError(f"Given input size: ({C}x{D}x{H}x{W}). Calculated output size: "
                           f"({C}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")
    values, indices = MAX_POOL3D(batched, kernel_size=kernel_size, stride=stride, padding=padding,
                                 dilation=dilation, ceil_mode=bool(ceil_mode))
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kd x kh x kw`` window of ``(N, C, D, H, W)`` (zero padding, counted
    unless ``count_include_pad=False``; ``divisor_override`` replaces the window size).

    >>> import ember
    >>> ember.nn.functional.avg_pool3d(ember.arange(8.).view(1, 1, 2, 2, 2), 2).tolist()
    [[[[[3.5]]]]]
    """
    kernel_size, stride, padding, _ = _pool3d_args(kernel_size, stride, padding, 1)
    _check_windows(input, kernel_size, stride, padding, (1, 1, 1))
    batched, unbatched = _batched(input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    D, H, W = input.shape[-3:]
    if any(n < k for n, k in zip((D + 2 * padding[0], H + 2 * padding[1], W + 2 * padding[2]), kernel_size)):
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})".format(
            D, H, W, *kernel_size))
    out = AVG_POOL3D(batched, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                     count_include_pad=bool(count_include_pad), divisor_override=divisor_override)
    return out.squeeze(0) if unbatched else out


def _adaptive_sizes(input, output_size, name):
    if input.ndim not in (4, 5):
        separator = ": " if "max" in name else " "  # torch's two messages differ by this colon
        shape = ", ".join(map(str, input.shape))
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got{separator}[{shape}]")
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes [{', '.join(map(str, input.shape))}] with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    sizes = _triple(output_size) if output_size is not None else (None,) * 3
    return tuple(input.shape[-3 + i] if s is None else int(s) for i, s in enumerate(sizes))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size`` (windows as in
    :func:`ember.native.pooling.pooling.adaptive_avg_pool3d`); with ``return_indices`` also the flat argmax positions.

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool3d(ember.arange(8.).view(1, 1, 2, 2, 2), 1).tolist()
    [[[[[7.0]]]]]
    """
    sizes = _adaptive_sizes(input, output_size, "adaptive_max_pool3d")
    batched = input if input.ndim == 5 else input.unsqueeze(0)
    out, indices = ADAPTIVE_MAX_POOL3D(batched, output_size=sizes)
    if input.ndim == 4:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out
