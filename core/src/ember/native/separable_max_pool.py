"""Separable max pooling for stride-1 windows: a ``kh x kw`` maximum as a ``1 x kw``
maximum along the rows followed by a ``kh x 1`` maximum along the columns, so
``kh + kw`` passes instead of ``kh * kw``; each pass runs over the flat padded buffer.

PyTorch counterpart: aten/src/ATen/native/cpu/MaxPoolKernel.cpp (the CPU kernel, which
scans every window tap by tap); the separable form is ember's (v2.13).

Used by ember/native/pooling.py for ``max_pool2d`` (and ``max_pool1d``) whenever the
stride is 1, as in SPPF's chained 5x5 pools; other strides keep the tap-by-tap kernel.

# NOTE [ Separable max pooling ]
# The maximum over a rectangle is the maximum over its rows of the maximum along each
# row, so a stride-1 ``k x k`` pool needs ``2k`` elementwise maxima over the image,
# not ``k^2``. Both passes shift a *flat* view of the padded buffer: tap ``j`` of a
# row is the element ``j * dilation`` columns on, i.e. ``j * dilation * stride_W``
# elements on in memory, whatever the layout (NCHW or NHWC). Each pass is then one
# long contiguous ``maximum`` (small feature maps no longer cost a loop per short
# row); positions whose window would run off the end of a row only fill the padding
# margin of the result, which is cut away. The argmax keeps PyTorch's tie rule, the
# first maximum in the window's row-major scan (a NaN wins, the last NaN met): along a
# row the first best column is kept, then across rows the first best row, and that
# row's best column is the window's first best in scan order.
"""

from ember.dtypes import is_floating_array
from ember.memory_format import array_suggests_channels_last


def padded_buffer(xp, x, g, fill):
    """``(flat, plane)``: the padded image in ``x``'s format filled with ``fill``, as a
    1-D array in memory order and as the ``(N, C, Hp, Wp)`` view of it."""
    N, C = x.shape[:2]
    if array_suggests_channels_last(x):
        memory = xp.full((N, g.Hp, g.Wp, C), fill, dtype=x.dtype)
        plane = memory.transpose(0, 3, 1, 2)
    else:
        memory = plane = xp.full((N, C, g.Hp, g.Wp), fill, dtype=x.dtype)
    plane[:, :, g.ph:g.ph + g.H, g.pw:g.pw + g.W] = x
    return memory.reshape(-1), plane


def _shifts(plane, g):
    """Flat distances, in elements, from a row's tap to the next and from a column's."""
    step_h, step_w = (s // plane.itemsize for s in plane.strides[2:])
    return g.dh * step_h, g.dw * step_w


def _on_output_grid(xp, flat, plane, g):
    """The ``(N, C, OH, OW)`` values of a flat result laid out like ``plane``: window
    ``(oh, ow)`` starts at the plane's ``(oh, ow)``."""
    strides = tuple(s // plane.itemsize * flat.itemsize for s in plane.strides)
    full = xp.lib.stride_tricks.as_strided(flat, plane.shape, strides)
    return full[:, :, :g.OH, :g.OW]


def max_values(xp, x, g, fill):
    """The ``(N, C, OH, OW)`` window maxima (no argmax), in ``x``'s format."""
    flat, plane = padded_buffer(xp, x, g, fill)
    row_step, column_step = _shifts(plane, g)
    rows = flat.size - (g.kw - 1) * column_step
    best = flat[:rows].copy()
    for j in range(1, g.kw):
        xp.maximum(best, flat[j * column_step:j * column_step + rows], out=best)
    result = xp.empty_like(flat)
    span = rows - (g.kh - 1) * row_step
    result[:span] = best[:span]
    for i in range(1, g.kh):
        xp.maximum(result[:span], best[i * row_step:i * row_step + span], out=result[:span])
    return _on_output_grid(xp, result, plane, g).copy(order="K")


def _running_max(xp, best, chosen, value, number, floating):
    """Fold ``value`` (tap ``number``) into ``best`` in place; ``chosen`` records the tap
    that won (strictly greater keeps the first; a NaN always wins)."""
    better = value > best
    if floating:
        better |= xp.isnan(value)
    # arithmetic, not a masked select (``where`` on a random mask is ~10x slower)
    chosen += better * (chosen.dtype.type(number) - chosen)
    xp.maximum(best, value, out=best)
    return better


def max_values_and_taps(xp, x, g, fill):
    """``(values, row tap, column tap)``, each ``(N, C, OH, OW)``: the window maxima and
    which tap ``(i, j)`` of the window holds each (NOTE [ Separable max pooling ])."""
    flat, plane = padded_buffer(xp, x, g, fill)
    floating = is_floating_array(x.dtype)
    tap_type = xp.int8 if max(g.kh, g.kw) <= 127 else xp.int32
    row_step, column_step = _shifts(plane, g)
    rows = flat.size - (g.kw - 1) * column_step
    best = flat[:rows].copy()
    column_tap = xp.zeros(rows, dtype=tap_type)
    for j in range(1, g.kw):
        _running_max(xp, best, column_tap, flat[j * column_step:j * column_step + rows], j, floating)
    span = rows - (g.kh - 1) * row_step
    result = xp.empty_like(flat)
    result[:span] = best[:span]
    row_tap = xp.zeros(flat.size, dtype=tap_type)
    chosen_column = xp.zeros(flat.size, dtype=tap_type)
    chosen_column[:span] = column_tap[:span]
    for i in range(1, g.kh):
        shift = i * row_step
        better = _running_max(xp, result[:span], row_tap[:span], best[shift:shift + span], i, floating)
        chosen_column[:span] += better * (column_tap[shift:shift + span] - chosen_column[:span])
    return tuple(_on_output_grid(xp, a, plane, g) for a in (result, row_tap, chosen_column))
