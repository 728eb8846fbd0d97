"""Pooling: ``max_pool1d/2d`` (with indices), ``avg_pool1d/2d``,
``adaptive_avg_pool1d/2d`` and ``adaptive_max_pool1d/2d``.

PyTorch counterpart: aten/src/ATen/native/DilatedMaxPool2d.cpp, AveragePool2d.cpp,
AdaptiveAveragePooling.cpp, AdaptiveMaxPooling2d.cpp, Pool.h (output sizes and
checks), derivatives.yaml and torch/nn/functional.py (v2.13).

The 2-D ops are the kernels; a 1-D pool runs on ``(N, C, 1, L)``. A kernel visits the
``kh*kw`` taps of the window (each a strided slice of the padded image, NOTE
[ Windows as strided views ] in ember/native/fold.py), so every step is vectorised
over the whole batch. Max pooling returns the argmax as a flat index into each input
plane (PyTorch's ``indices``); its backward adds each gradient at the pixel its index
names (one ``bincount`` over the planes), and the backward of that is a ``gather``:
double backward for free. Stride-1 windows take the separable kernel of
ember/native/pooling/separable_max_pool.py, and inference skips the argmax (NOTE [ Max pooling
without indices ]).
Adaptive max pooling's windows vary in size, so its backward is a ``scatter_add``.
"""

import math
from functools import lru_cache

import numpy as np

from ember.amp.state import autocast_state, suspended
from ember.autograd.forward_grad import AUTO_LINEAR
from ember.autograd.grad_mode import grad_state
from ember.dispatcher import NONE, Op
from ember.dtypes import is_floating_array
from ember.memory_format import array_suggests_channels_last, channels_last_array
from ember.native.fold import Geometry, window_count
from ember.native.pooling.separable_max_pool import (
    max_values,
    max_values_and_taps,
    may_hold_nan,
    new_in_format,
    running_max,
)
from ember.native.shape.views import element_strides
from ember.opmath import is_reduced


def _fill_low(xp, dtype):
    """The padding value max pooling never picks: -inf, or the integer minimum."""
    return -math.inf if is_floating_array(dtype) else np.iinfo(dtype).min


def _taps(g):
    for i in range(g.kh):
        for j in range(g.kw):
            yield i, j


def _tap_indices(g):
    """Per tap ``(i, j)``, in :func:`_taps` order, the index of the ``(N, C, OH, OW)``
    slice of the padded plane that tap of every window reads; worked out once per set
    of sizes."""
    return _tap_indices_of(g.kh, g.kw, g.dh, g.dw, g.sh, g.sw, g.OH, g.OW)


@lru_cache(maxsize=1024)
def _tap_indices_of(kh, kw, dh, dw, sh, sw, OH, OW):
    indices = []
    for i in range(kh):
        for j in range(kw):
            top, left = i * dh, j * dw
            rows = slice(top, top + sh * (OH - 1) + 1, sh)
            cols = slice(left, left + sw * (OW - 1) + 1, sw)
            indices.append((slice(None), slice(None), rows, cols))
    return tuple(indices)


def _pool_geometry(shape, kernel_size, stride, padding, dilation, ceil_mode):
    return _sized_geometry(tuple(shape), tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation),
                           bool(ceil_mode))


@lru_cache(maxsize=1024)
def _sized_geometry(shape, kernel_size, stride, padding, dilation, ceil_mode):
    """A pool's Geometry, made once per set of sizes (NOTE [ A convolution's fixed cost,
    cached per shape ] in ember/native/convolution/convolution.py)."""
    out = tuple(window_count(shape[2 + d], kernel_size[d], stride[d], padding[d], dilation[d], ceil_mode)
                for d in (0, 1))
    return Geometry(shape, kernel_size, stride, padding, dilation, out_size=out)


# --- max pooling ---------------------------------------------------------------------


def _max_pool_kernel(xp, x, kernel_size, stride, padding, dilation, ceil_mode):
    g = _pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    fill = _fill_low(xp, x.dtype)
    if (g.sh, g.sw) == (1, 1):  # NOTE [ Separable max pooling ]
        best, row_tap, column_tap = max_values_and_taps(xp, x, g, fill)
        indices = _flat_indices(xp, x, g, row_tap, column_tap)
    else:
        best, indices = _max_by_taps(xp, x, g, fill)
    indices = _first_inside_where_nothing_beats_fill(xp, g, best, indices, fill)
    return best, _in_format_of(xp, x, indices)


def _flat_indices(xp, x, g, row_tap, column_tap):
    """Flat input indices of the chosen taps ``(i, j)`` of stride-1 windows, in x's format."""
    rows = xp.arange(g.OH).reshape(-1, 1) - g.ph
    columns = xp.arange(g.OW) - g.pw
    indices = new_in_format(xp, x, row_tap.shape, xp.int64, xp.empty)  # exact strides
    indices[...] = row_tap
    indices *= g.dh
    indices += rows
    indices *= g.W
    indices += columns
    indices += column_tap.astype(xp.int64) * g.dw
    return indices


def _max_by_taps(xp, x, g, fill):
    """Window maxima and their flat input indices, one strided slice per tap."""
    # in x's format (NOTE [ Pooling in channels_last ])
    plane = g.padded(xp, x, fill)
    indices = _tap_indices(g)
    best = plane[indices[0]].copy(order="K")
    taps = g.kh * g.kw
    # small: fewer bytes to touch
    best_tap = xp.zeros_like(best, dtype=xp.int8 if taps <= 127 else xp.int32)
    nan_wins = may_hold_nan(xp, x)
    for number, index in enumerate(indices):
        if number:  # a strictly greater value or a NaN wins (PyTorch's rule)
            running_max(xp, best, best_tap, plane[index], number, nan_wins)
    # Flat input index = where the window starts + where its chosen tap sits in it.
    tap_offsets, window_starts = _flat_offsets(g)
    return best, xp.take(xp.asarray(tap_offsets), best_tap) + xp.asarray(window_starts)


def _first_inside_where_nothing_beats_fill(xp, g, best, indices, fill):
    """PyTorch starts each window's argmax at its first tap inside the image and moves
    it only for a strictly greater value: where the maximum is the padding value (an
    all ``-inf`` window), the index is that first inside tap, never a padding one."""
    unbeaten = best == fill
    if not bool(unbeaten.any()):
        return indices

    def first_inside(count, stride, pad, dilation):
        start = np.arange(count) * stride - pad
        skipped = -(-np.maximum(-start, 0) // dilation)  # taps that read the padding
        return start + skipped * dilation

    rows = first_inside(g.OH, g.sh, g.ph, g.dh)
    columns = first_inside(g.OW, g.sw, g.pw, g.dw)
    first = xp.asarray(rows[:, None] * g.W + columns[None, :])
    xp.copyto(indices, first, where=unbeaten)  # in place: the layout stays
    return indices


def _max_pool_values_kernel(xp, x, kernel_size, stride, padding, dilation, ceil_mode):
    g = _pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    fill = _fill_low(xp, x.dtype)
    if (g.sh, g.sw) == (1, 1):
        return max_values(xp, x, g, fill)
    plane = g.padded(xp, x, fill)
    first, *others = _tap_indices(g)
    best = plane[first].copy(order="K")
    for index in others:
        xp.maximum(best, plane[index], out=best)
    return best


# NOTE [ Pooling in channels_last ]
# PyTorch's pooling kernels keep the input's suggested memory format: a channels_last
# input gives channels_last outputs (max pooling's indices too) and a channels_last
# gradient. Here the padded plane takes the input's format, so every tap's slice and
# the running maximum or sum stay in NHWC memory, and the backward's plane takes the
# format of what it starts from (max pooling: the saved indices, which follow the
# input; average pooling: the incoming gradient, where PyTorch asks the input).
# Adaptive pooling, built from other ops, lays its result out at the end.


def _in_format_of(xp, x, out):
    """``out`` in ``x``'s suggested format: channels_last (a copy if it is not) or as is."""
    return channels_last_array(xp, out) if array_suggests_channels_last(x) else out


def _plane_like(xp, like, shape, dtype):
    """Zeros of the padded ``shape``, channels_last when ``like`` suggests it."""
    return new_in_format(xp, like, shape, dtype, xp.zeros)


def _cropped(xp, plane, g):
    """The input-sized window of a padded plane, copied in the plane's format."""
    inside = plane[:, :, g.ph:g.ph + g.H, g.pw:g.pw + g.W]
    return inside.copy(order="K") if array_suggests_channels_last(plane) else xp.ascontiguousarray(inside)


def _flat_offsets(g):
    """Per tap, its offset in a flattened input plane from the window's start; per
    output, where its window starts (both may point into the padding)."""
    tap_offsets = np.array([i * g.dh * g.W + j * g.dw for i, j in _taps(g)], dtype=np.int64)
    window_starts = (np.arange(g.OH)[:, None] * g.sh - g.ph) * g.W + np.arange(g.OW) * g.sw - g.pw
    return tap_offsets, window_starts


def _scatter_to_planes(grad, indices, shape):
    """Add ``grad`` into zeros of ``shape`` at the flat per-plane ``indices``."""
    from ember.native.factory import zeros

    planes = zeros(tuple(shape[:-2]) + (shape[-2] * shape[-1],), dtype=grad.dtype, device=grad.device)
    return planes.scatter_add(-1, indices.flatten(-2), grad.flatten(-2)).view(tuple(shape))


def _indexed_pool_backward(ctx, grad, grad_indices):
    (indices,) = ctx.saved_outputs_from(1)  # the values stay free to change in place, as in torch
    grad_input = _scatter_to_planes(grad, indices, ctx.input_meta[0][0])
    return (_in_format_of_tensor(indices, grad_input),)


def _in_format_of_tensor(like, t):
    """Tensor ``t`` laid out in ``like``'s suggested format (NOTE [ Pooling in channels_last ])."""
    from ember.memory_format import channels_last, channels_last_strides, suggest_memory_format

    if suggest_memory_format(like) is not channels_last:
        return t
    if all(size == 1 for size in t.shape[2:]):  # one pixel: the same memory order, only strides differ
        return t.as_strided(tuple(t.shape), channels_last_strides(tuple(t.shape)))
    return t.contiguous(memory_format=channels_last)


def _max_pool_backward_kernel(xp, grad, input, indices, kernel_size, stride, padding, dilation, ceil_mode):
    # Each output's gradient goes to the input pixel its index names. Numbered by
    # where they sit in memory (all planes side by side, NCHW or NHWC as the indices),
    # that is one ``bincount`` with the gradients as weights: it adds the shares of a
    # pixel that several windows picked (overlapping stride-1 windows often do), in
    # one pass instead of a masked slice-add per tap. (It sums in float64.)
    if input.ndim == 3:  # unbatched, as torch's schema allows
        args = (kernel_size, stride, padding, dilation, ceil_mode)
        return _max_pool_backward_kernel(xp, grad[None], input[None], indices[None], *args)[0]
    N, C, H, W = input.shape  # (only its shape is read: NOTE [ The input of a pooling backward ])
    channels_last = array_suggests_channels_last(indices)
    if channels_last:
        image = (xp.arange(N).reshape(N, 1, 1, 1) * (H * W) + indices) * C
        position = image + xp.arange(C).reshape(1, C, 1, 1)
    else:
        position = indices + xp.arange(N * C).reshape(N, C, 1, 1) * (H * W)
    # the same order for both (memory order when they share a layout)
    order = "K" if element_strides(position) == element_strides(grad) else "C"
    total = xp.bincount(position.ravel(order=order), weights=grad.ravel(order=order), minlength=N * C * H * W)
    total = total.astype(grad.dtype, copy=False)
    if channels_last:
        return total.reshape(N, H, W, C).transpose(0, 3, 1, 2)
    return total.reshape(N, C, H, W)


# NOTE [ The input of a pooling backward ]
# aten::max_pool2d_with_indices_backward takes torch's schema (grad_output, self, kernel_size,
# stride, padding, dilation, ceil_mode, indices), where ``self`` gives only the shape of the
# gradient. max_pool2d's backward keeps its indices, not its input (which stays free to be
# freed or changed in place), so it passes a stand-in of that shape: one zero broadcast,
# no memory of its own.


def _input_stand_in(like, shape):
    return like.new_zeros(()).expand(tuple(shape))


def _max_pool_backward(ctx, grad, grad_indices):
    (indices,) = ctx.saved_outputs_from(1)  # the values stay free to change in place, as in torch
    return (MAX_POOL2D_BACKWARD(grad, _input_stand_in(grad, ctx.input_meta[0][0]), indices, **ctx.attrs),)


def _max_pool_double_backward(ctx, grad):
    # The backward puts each output gradient at its argmax: its adjoint reads them back.
    # The input only gives the shape: no gradient (PyTorch's is zeros).
    _, _, indices = ctx.saved_inputs
    return grad.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.shape), None, None


MAX_POOL2D = Op("aten::max_pool2d_with_indices", _max_pool_kernel, _max_pool_backward, promote=NONE,
                save="outputs", num_outputs=2)
MAX_POOL2D_BACKWARD = Op("aten::max_pool2d_with_indices_backward", _max_pool_backward_kernel,
                         _max_pool_double_backward, promote=NONE, save="inputs")


def _max_pool_values_backward(ctx, grad):
    # max_pool2d routes inputs that need a gradient to MAX_POOL2D; called directly,
    # this op finds its argmax again.
    (x,) = ctx.saved_inputs
    _, indices = MAX_POOL2D(x.detach(), **ctx.attrs)
    return (MAX_POOL2D_BACKWARD(grad, x.detach(), indices, **ctx.attrs),)


# NOTE [ Max pooling without indices ]
# The argmax costs more than the maximum (a comparison, a NaN test and an index update
# per tap, then the flat index). When nothing will read it (no ``return_indices``, and
# the input needs no gradient or grad mode is off: inference), ``max_pool2d`` runs
# ``aten::max_pool2d``, whose kernel takes maxima only, as PyTorch's ``max_pool1d``
# does on CPU for inputs that need no gradient.
MAX_POOL2D_VALUES = Op("aten::max_pool2d", _max_pool_values_kernel, _max_pool_values_backward, promote=NONE,
                       save="inputs")


def _max_pool_op(input, return_indices):
    """The op for ``max_pool2d`` (NOTE [ Max pooling without indices ])."""
    if return_indices or (input.requires_grad and grad_state.enabled):
        return MAX_POOL2D
    return MAX_POOL2D_VALUES


# --- average pooling -----------------------------------------------------------------


def _avg_divisor(xp, g, count_include_pad, divisor_override, dtype):
    """How many elements each window averages, an ``(OH, OW)`` array (or the override)."""
    if divisor_override is not None:
        return divisor_override
    return xp.asarray(_divisors(g.OH, g.H, g.kh, g.sh, g.ph, g.OW, g.W, g.kw, g.sw, g.pw, bool(count_include_pad),
                                np.dtype(dtype)))


@lru_cache(maxsize=1024)
def _divisors(OH, H, kh, sh, ph, OW, W, kw, sw, pw, count_include_pad, dtype):
    """The NumPy table of :func:`_avg_divisor`, made once per set of sizes and read-only
    (every caller only divides by it)."""
    divisor = np.outer(window_spans(OH, H, kh, sh, ph, count_include_pad),
                       window_spans(OW, W, kw, sw, pw, count_include_pad)).astype(dtype)
    divisor.flags.writeable = False
    return divisor


def window_spans(out, size, kernel, stride, pad, count_include_pad):
    """Along one dim, how many elements each of ``out`` average-pooling windows counts: the
    window clipped to the padded input, or (``count_include_pad=False``) to the input."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool_kernel(xp, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    g = _pool_geometry(x.shape, kernel_size, stride, padding, (1, 1), ceil_mode)
    plane = g.padded(xp, x)
    first, *others = _tap_indices(g)
    total = plane[first].copy(order="K")
    for index in others:
        total += plane[index]
    divisor = _avg_divisor(xp, g, count_include_pad, divisor_override, x.dtype)
    if not is_floating_array(x.dtype):
        return _in_format_of(xp, x, xp.trunc(total / divisor).astype(x.dtype))  # C++ division truncates
    total /= divisor
    return total


def _avg_pool_backward_kernel(xp, grad, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override):
    g = _pool_geometry(input_size, kernel_size, stride, padding, (1, 1), ceil_mode)
    share = grad / _avg_divisor(xp, g, count_include_pad, divisor_override, grad.dtype)
    plane = _plane_like(xp, grad, tuple(input_size[:2]) + (g.Hp, g.Wp), grad.dtype)
    for index in _tap_indices(g):
        plane[index] += share
    return _cropped(xp, plane, g)


def _avg_pool_backward(ctx, grad):
    return (AVG_POOL2D_BACKWARD(grad, input_size=ctx.input_meta[0][0], **ctx.attrs),)


def _avg_pool_double_backward(ctx, grad):
    attrs = {k: v for k, v in ctx.attrs.items() if k != "input_size"}
    return (AVG_POOL2D(grad, **attrs),)


AVG_POOL2D = Op("aten::avg_pool2d", _avg_pool_kernel, _avg_pool_backward, promote=NONE, opmath=True, jvp=AUTO_LINEAR)
AVG_POOL2D_BACKWARD = Op("aten::avg_pool2d_backward", _avg_pool_backward_kernel, _avg_pool_double_backward,
                         promote=NONE, opmath=True)


# --- adaptive pooling ----------------------------------------------------------------


def adaptive_ranges(size, out):
    """Window ``i`` of an adaptive pool covers ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    index = np.arange(out)
    return (index * size) // out, -((-(index + 1) * size) // out)


def _adaptive_max_kernel(xp, x, output_size):
    H, W = x.shape[-2:]
    gathers = []
    for size, out in zip((H, W), output_size):
        start, end = adaptive_ranges(size, out)
        width = int((end - start).max()) if out else 1
        # Windows shorter than the longest repeat their last element (harmless for a max).
        gathers.append(np.minimum(start[:, None] + np.arange(width), end[:, None] - 1))
    rows, cols = (xp.asarray(a) for a in gathers)
    windows = x[..., rows[:, :, None, None], cols[None, None, :, :]]  # (N, C, OH, kh, OW, kw)
    windows = windows.swapaxes(-3, -2)
    windows = windows.reshape(windows.shape[:-2] + (-1,))
    best = windows.argmax(axis=-1)
    kw = cols.shape[1]
    out = xp.take_along_axis(windows, best[..., None], axis=-1)[..., 0]
    h = _pick(xp, rows, best // kw, axis=-2)
    w = _pick(xp, cols, best % kw, axis=-1)
    return _in_format_of(xp, x, out), _in_format_of(xp, x, h * W + w)


def _pick(xp, table, choice, axis):
    """``table[o, choice]`` for each output position, ``o`` the row (axis -2) or column (axis -1)."""
    if axis == -2:
        o = xp.arange(table.shape[0]).reshape(-1, 1)
    else:
        o = xp.arange(table.shape[0])
    return table[o, choice]


ADAPTIVE_MAX_POOL2D = Op("aten::adaptive_max_pool2d", _adaptive_max_kernel, _indexed_pool_backward,
                         promote=NONE, save="outputs", num_outputs=2)


# --- public functions ----------------------------------------------------------------


def _pair(value):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    return value * 2 if len(value) == 1 else value


def _single(value):
    return value if isinstance(value, int) else tuple(value)[0]


def _to_batched(input, dims, message):
    if input.ndim == dims + 2:
        return input, False
    if input.ndim == dims + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(message)


def _check_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling checks, run once per distinct set of sizes (a failing set is
    not cached: it raises again)."""
    _check_pool2d_sizes(tuple(input.shape[-3:]), tuple(kernel_size), tuple(stride), tuple(padding),
                        tuple(dilation), bool(ceil_mode))


@lru_cache(maxsize=1024)
def _check_pool2d_sizes(image_shape, kernel_size, stride, padding, dilation, ceil_mode):
    if min(kernel_size) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel_size[0]} "
                           f"kW: {kernel_size[1]}")
    if min(stride) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dilation[0]} "
                           f"dilationW: {dilation[1]}")
    for k, p, d in zip(kernel_size, padding, dilation):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    C, H, W = image_shape
    out = [window_count(size, k, s, p, d, ceil_mode) for size, k, s, p, d
           in zip((H, W), kernel_size, stride, padding, dilation)]
    if min(out) < 1:
        raise RuntimeError(f"Given input size: ({C}x{H}x{W}). Calculated output size: ({C}x{out[0]}x{out[1]}). "
                           "Output size is too small")


def _pool2d_args(kernel_size, stride, padding, dilation):
    kernel_size = _pair(kernel_size)
    stride = kernel_size if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(stride)
    return kernel_size, stride, _pair(padding), _pair(dilation)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kh x kw`` window (implicit ``-inf`` padding); with
    ``return_indices`` also its flat position in the input plane (for ``max_unpool``).

    >>> import ember
    >>> ember.nn.functional.max_pool2d(ember.arange(16.).view(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    kernel_size, stride, padding, dilation = _pool2d_args(kernel_size, stride, padding, dilation)
    if input.ndim not in (3, 4) or input.numel() == 0 and input.ndim == 3:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    _check_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
    batched, unbatched = _to_batched(input, 2, "")
    op = _max_pool_op(input, return_indices)
    result = op(batched, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                ceil_mode=bool(ceil_mode))
    if op is MAX_POOL2D_VALUES:
        return result.squeeze(0) if unbatched else result
    out, indices = result
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` over the last dim of ``(N, C, L)`` or ``(C, L)``."""
    kernel, pad = _single(kernel_size), _single(padding)
    step = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _single(stride)
    dilation = _single(dilation)
    if input.ndim not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:[{', '.join(map(str, input.shape))}]")
    if kernel <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kernel}")
    if step <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {step}")
    if pad < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pad}")
    if pad > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={pad} and "
                           f"kernel_size={kernel}")
    if dilation <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation}")
    length = window_count(input.shape[-1], kernel, step, pad, dilation, ceil_mode)
    if length < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {length}")
    batched, unbatched = _to_batched(input, 1, "")
    op = _max_pool_op(input, return_indices)
    result = op(batched.unsqueeze(-2), kernel_size=(1, kernel), stride=(1, step), padding=(0, pad),
                dilation=(1, dilation), ceil_mode=bool(ceil_mode))
    if op is MAX_POOL2D_VALUES:
        out = result.squeeze(-2)
        return out.squeeze(0) if unbatched else out
    out, indices = result[0].squeeze(-2), result[1].squeeze(-2)
    if unbatched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kh x kw`` window (zero padding, counted unless
    ``count_include_pad=False``; ``divisor_override`` replaces the window size).

    >>> import ember
    >>> ember.nn.functional.avg_pool2d(ember.arange(16.).view(1, 1, 4, 4), 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    kernel_size, stride, padding, _ = _pool2d_args(kernel_size, stride, padding, 1)
    if input.ndim not in (3, 4) or input.numel() == 0 and input.ndim == 3:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool2d(input, kernel_size, stride, padding, (1, 1), ceil_mode)
    batched, unbatched = _to_batched(input, 2, "")
    out = AVG_POOL2D(batched, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                     count_include_pad=bool(count_include_pad), divisor_override=divisor_override)
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """:func:`avg_pool2d` over the last dim of ``(N, C, L)`` or ``(C, L)``."""
    kernel, pad = _single(kernel_size), _single(padding)
    step = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _single(stride)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input, but got {input.ndim}D")
    out = avg_pool2d(input.unsqueeze(-2), (1, kernel), (1, step), (0, pad), ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _adaptive_output(input, output_size, dims, name):
    if dims == 2 and input.ndim < 3:
        raise ValueError("Input dimension should be at least 3")
    if dims == 1 and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    sizes = (output_size,) * dims if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(sizes) == 1 and dims == 2:
        sizes = sizes * 2
    sizes = tuple(input.shape[-dims + i] if s is None else int(s) for i, s in enumerate(sizes))
    for d in range(input.ndim - dims, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes [{', '.join(map(str, input.shape))}] with dimension {d} being empty")
    return sizes


def _averaging_matrix(size, out, like):
    """``(out, size)`` matrix whose row ``i`` averages window ``i`` of an adaptive pool."""
    from ember.native.factory import tensor

    start, end = adaptive_ranges(size, out)
    position = np.arange(size)
    inside = (position >= start[:, None]) & (position < end[:, None])
    matrix = inside / (end - start)[:, None]
    return tensor(matrix.astype(like._data.dtype), device=like.device)


# NOTE [ Global average pooling as one matrix-vector product ]
# adaptive_avg_pool2d(x, 1) ends most classifiers; PyTorch computes it as
# `x.mean((-1, -2), keepdim=True)` (then restrides a channels_last result). NumPy's mean
# over two axes is a slow strided reduction: on a row-major input, which is an
# (N*C, H*W) matrix, the sums are one BLAS matrix-vector product with ones (NOTE [ Norm
# reductions as matrix-vector products ]), divided by H*W as the mean divides, and
# the backward is the mean's (so the node is MeanBackward1, as torch's). Other inputs
# (channels_last, sliced, 3-d, empty) keep the `mean` path.


def _global_avg_pool_kernel(xp, x):
    from ember.native.support import blas_sums

    N, C, H, W = x.shape
    sums = blas_sums.row_sums(xp, x.reshape(N * C, H * W))
    return (sums / (H * W)).reshape(N, C, 1, 1)


def _global_avg_pool_backward(ctx, grad):
    shape = ctx.input_meta[0][0]
    return (grad.expand(shape) / (shape[2] * shape[3]),)  # the mean's backward


GLOBAL_AVG_POOL2D = Op("aten::adaptive_avg_pool2d", _global_avg_pool_kernel, _global_avg_pool_backward,
                       promote=NONE, backward_name="MeanBackward1", opmath=True)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (an int, a pair, None keeps a size):
    window ``i`` covers ``[floor(i*H/OH), ceil((i+1)*H/OH))``.

    Global pooling is a ``mean``; otherwise the pool is separable, ``A_h @ x @ A_w^T``
    with small averaging matrices, so autograd (and double backward) come from matmul.

    >>> import ember
    >>> ember.nn.functional.adaptive_avg_pool2d(ember.arange(16.).view(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    """
    out_h, out_w = _adaptive_output(input, output_size, 2, "adaptive_avg_pool2d")
    H, W = input.shape[-2:]
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{_scalar_name(input.dtype)}'")
    if (out_h, out_w) == (1, 1):
        if input.ndim == 4 and input.numel() and input._data.flags.c_contiguous:
            return GLOBAL_AVG_POOL2D(input)
        return _in_format_of_tensor(input, input.mean((-2, -1), keepdim=True))
    if out_h and out_w and H % out_h == 0 and W % out_w == 0:
        return avg_pool2d(input, (H // out_h, W // out_w))
    if autocast_state.enabled:  # one op in PyTorch, on no autocast list: its products are not cast
        with suspended():
            return adaptive_avg_pool2d(input, output_size)
    if is_reduced(input.dtype):  # the products in float32, rounded once (NOTE [ opmath ])
        return adaptive_avg_pool2d(input.float(), (out_h, out_w)).to(input.dtype)
    pooled = _averaging_matrix(H, out_h, input) @ input @ _averaging_matrix(W, out_w, input).t()
    if out_h and out_w and not bool(pooled.isfinite().all()):  # NOTE [ Adaptive pooling of infinities ]
        pooled = _window_means(_window_means(input, -2, out_h), -1, out_w)
    return _in_format_of_tensor(input, pooled)


# NOTE [ Adaptive pooling of infinities ]
# The averaging matrices give every element outside a window the weight 0, and 0 * inf
# is NaN: one infinite input would make every window NaN, where PyTorch's kernel sums
# each window on its own ([-inf, 1, 2, 3] pooled to 3 is [-inf, 1.5, 2.5]). Finite
# inputs give a finite result, so only a result that is not finite everywhere is
# recomputed, window by window: each window's mean, along one dim and then the other.


def _window_means(input, dim, out):
    """The mean of each of the ``out`` adaptive windows along ``dim``, kept as that dim."""
    from ember.native.shape.shape import cat

    start, end = adaptive_ranges(input.shape[dim], out)
    return cat([input.narrow(dim, int(a), int(b - a)).mean(dim, keepdim=True) for a, b in zip(start, end)], dim)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size`` (an
    int or a triple, None keeps a size): window ``i`` along each dim covers
    ``[floor(i*D/OD), ceil((i+1)*D/OD))``, as in :func:`adaptive_avg_pool2d`; each
    window's mean, one dim after another.

    >>> import ember
    >>> ember.nn.functional.adaptive_avg_pool3d(ember.arange(8.).view(1, 2, 2, 2), 1).tolist()
    [[[[3.5]]]]
    """
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    if not isinstance(output_size, int) and output_size is not None and len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    sizes = _adaptive_output(input, output_size, 3, "adaptive_avg_pool3d")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool3d_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if 0 in sizes or input.numel() == 0:
        from ember.native.factory import zeros

        return zeros(*input.shape[:-3], *sizes, dtype=input.dtype, device=input.device) + input.sum() * 0
    pooled = input
    for dim, out in zip((-3, -2, -1), sizes):
        pooled = _window_means(pooled, dim, out)
    return pooled.contiguous()


def adaptive_avg_pool1d(input, output_size):
    """:func:`adaptive_avg_pool2d` over the last dim of ``(N, C, L)`` or ``(C, L)``."""
    (length,) = _adaptive_output(input, output_size, 1, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, length)).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (windows as in :func:`adaptive_avg_pool2d`).

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool2d(ember.arange(16.).view(1, 1, 4, 4), 1).tolist()
    [[[[15.0]]]]
    """
    sizes = _adaptive_output(input, output_size, 2, "adaptive_max_pool2d")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool2d\" not implemented for '{_scalar_name(input.dtype)}'")
    out, indices = ADAPTIVE_MAX_POOL2D(input, output_size=sizes)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """:func:`adaptive_max_pool2d` over the last dim of ``(N, C, L)`` or ``(C, L)``."""
    (length,) = _adaptive_output(input, output_size, 1, "adaptive_max_pool1d")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool2d\" not implemented for '{_scalar_name(input.dtype)}'")
    out, indices = ADAPTIVE_MAX_POOL2D(input.unsqueeze(-2), output_size=(1, length))
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def _scalar_name(dtype):
    from ember.native.support._inplace import _type_name

    return _type_name(dtype)
