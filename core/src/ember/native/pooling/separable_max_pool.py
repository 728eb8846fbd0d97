"""Separable max pooling for stride-1 windows: a ``kh x kw`` maximum as a ``1 x kw``
maximum along the rows followed by a ``kh x 1`` maximum along the columns, so
``kh + kw`` passes instead of ``kh * kw``.

PyTorch counterpart: aten/src/ATen/native/cpu/MaxPoolKernel.cpp (the CPU kernel, which
scans every window tap by tap); the separable form is ember's (v2.13).

Used by ember/native/pooling/pooling.py for ``max_pool2d`` (and ``max_pool1d``) whenever the
stride is 1, as in SPPF's chained 5x5 pools; other strides keep the tap-by-tap kernel.

# NOTE [ Separable max pooling ]
# The maximum over a rectangle is the maximum over its rows of the maximum along each
# row, so a stride-1 ``k x k`` pool needs ``2k`` elementwise maxima over the image,
# not ``k^2``. A pass along one axis is a running maximum over the taps, each tap a
# shifted slice. Two ways to shift:
# - *flat shifts*: in a flat view of the padded buffer, tap ``j`` is ``j * dilation *
#   stride_W`` elements on, whatever the layout (NCHW or NHWC), so every pass is one
#   long contiguous ``maximum`` (a slice of short NCHW rows would cost a loop per
#   row); results that run off a row only land in the margin, which is cut away.
# - *edge slices*, for channels_last maps whose padding margin would be most of the
#   buffer (SPPF's 5x5 pools on a 4x4 map: 8x8 padded): tap ``j`` of output ``o``
#   reads pixel ``o + j * dilation - padding``; only the outputs whose tap falls
#   inside the image take part, the others keep the running value (which starts as
#   the padding value), so no padded copy is made. Each slice's inner runs are whole
#   channel vectors; in NCHW they would be a few pixels of a row, and measured twice
#   as slow as the flat shifts there.
# The argmax keeps PyTorch's tie rule, the first maximum in the window's row-major
# scan (a NaN wins, the last NaN met): along a row the first best column is kept, then
# across rows the first best row, and that row's best column is the window's first
# best in scan order.
"""

from ember.dtypes import is_floating_array
from ember.memory_format import array_suggests_channels_last


def new_in_format(xp, like, shape, dtype, make):
    """``make(...)`` of the 4-d ``shape``, channels_last when ``like`` suggests it."""
    if array_suggests_channels_last(like):
        N, C, H, W = shape
        return make((N, H, W, C), dtype=dtype).transpose(0, 3, 1, 2)
    return make(shape, dtype=dtype)


def _tap_type(xp, g):
    return xp.int8 if max(g.kh, g.kw) <= 127 else xp.int32


def may_hold_nan(xp, x):
    """Whether a NaN can win a window (the padding is never NaN): one test per pool
    spares two passes per tap of the argmax search when there is none."""
    return is_floating_array(x.dtype) and bool(xp.isnan(x).any())


def running_max(xp, best, chosen, value, number, nan_wins, carried=None):
    """Fold ``value`` (tap ``number``) into ``best`` in place; ``chosen`` records
    the tap that won (strictly greater keeps the first; a NaN always wins, if
    ``nan_wins``) and ``carried``, a ``(kept, offered)`` pair, takes ``offered``
    where the tap won."""
    better = value > best
    if nan_wins:
        better |= xp.isnan(value)
    # arithmetic, not a masked select (``where`` on a random mask is ~10x slower)
    chosen += better * (chosen.dtype.type(number) - chosen)
    if carried is not None:
        kept, offered = carried
        kept += better * (offered - kept)
    xp.maximum(best, value, out=best)


def uses_edge_slices(x, g):
    """Edge slices for channels_last planes that padding would more than double
    (NOTE [ Separable max pooling ])."""
    return g.Hp * g.Wp > 2 * g.H * g.W and array_suggests_channels_last(x)


# --- edge slices ---------------------------------------------------------------------


def _inside(out_size, size, offset, axis):
    """``(output, input)`` index tuples along ``axis`` for the outputs whose tap reads
    ``o + offset`` inside ``[0, size)``; None when there are none."""
    low, high = max(0, -offset), min(out_size, size - offset)
    if high <= low:
        return None
    before = (slice(None),) * axis
    return before + (slice(low, high),), before + (slice(low + offset, high + offset),)


def _edge_pass(xp, image, axis, g, fill, chosen=None, carried=None):
    """The running maximum along ``axis`` (3: rows, 2: columns) of ``image``, reading only
    inside it; with ``chosen`` (zeros of the result's shape) also the winning tap."""
    kernel, dilation, pad, out_size = (g.kw, g.dw, g.pw, g.OW) if axis == 3 else (g.kh, g.dh, g.ph, g.OH)
    shape = image.shape[:axis] + (out_size,) + image.shape[axis + 1:]
    best = new_in_format(xp, image, shape, image.dtype, xp.empty)
    best[...] = fill
    nan_wins = chosen is not None and may_hold_nan(xp, image)  # values alone: maximum keeps NaN
    for tap in range(kernel):
        where = _inside(out_size, image.shape[axis], tap * dilation - pad, axis)
        if where is None:
            continue
        out, source = where
        if chosen is None:
            xp.maximum(best[out], image[source], out=best[out])
        else:
            offered = None if carried is None else (carried[0][out], carried[1][source])
            running_max(xp, best[out], chosen[out], image[source], tap, nan_wins, offered)
    return best


def _edge_values(xp, x, g, fill):
    return _edge_pass(xp, _edge_pass(xp, x, 3, g, fill), 2, g, fill)


def _edge_values_and_taps(xp, x, g, fill):
    tap_type = _tap_type(xp, g)
    column_tap = new_in_format(xp, x, x.shape[:3] + (g.OW,), tap_type, xp.zeros)
    rows = _edge_pass(xp, x, 3, g, fill, column_tap)
    row_tap = new_in_format(xp, x, x.shape[:2] + (g.OH, g.OW), tap_type, xp.zeros)
    chosen_column = new_in_format(xp, x, row_tap.shape, tap_type, xp.zeros)
    best = _edge_pass(xp, rows, 2, g, fill, row_tap, carried=(chosen_column, column_tap))
    return best, row_tap, chosen_column


# --- flat shifts ---------------------------------------------------------------------


def padded_buffer(xp, x, g, fill):
    """``(flat, plane)``: the padded image in ``x``'s format filled with ``fill``, as a
    1-D array in memory order and as the ``(N, C, Hp, Wp)`` view of it."""
    plane = new_in_format(xp, x, x.shape[:2] + (g.Hp, g.Wp), x.dtype, xp.empty)
    plane[...] = fill
    plane[:, :, g.ph:g.ph + g.H, g.pw:g.pw + g.W] = x
    memory = plane.transpose(0, 2, 3, 1) if array_suggests_channels_last(x) else plane
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


def _flat_values(xp, x, g, fill):
    flat, plane = padded_buffer(xp, x, g, fill)
    row_step, column_step = _shifts(plane, g)
    # along the rows: the maximum of kw taps, each column_step elements on
    rows = flat.size - (g.kw - 1) * column_step
    across = flat[:rows].copy()
    for j in range(1, g.kw):
        xp.maximum(across, flat[j * column_step:j * column_step + rows], out=across)
    # down the columns: the maximum of kh row results, each row_step elements on
    span = rows - (g.kh - 1) * row_step
    result = xp.empty_like(flat)
    best = result[:span]
    best[...] = across[:span]
    for i in range(1, g.kh):
        xp.maximum(best, across[i * row_step:i * row_step + span], out=best)
    return _on_output_grid(xp, result, plane, g)


def _flat_values_and_taps(xp, x, g, fill):
    flat, plane = padded_buffer(xp, x, g, fill)
    nan_wins = may_hold_nan(xp, x)
    tap_type = _tap_type(xp, g)
    row_step, column_step = _shifts(plane, g)
    rows = flat.size - (g.kw - 1) * column_step
    best = flat[:rows].copy()
    column_tap = xp.zeros(rows, dtype=tap_type)
    for j in range(1, g.kw):
        running_max(xp, best, column_tap, flat[j * column_step:j * column_step + rows], j, nan_wins)
    span = rows - (g.kh - 1) * row_step
    result = xp.empty_like(flat)
    result[:span] = best[:span]
    row_tap = xp.zeros(flat.size, dtype=tap_type)
    chosen_column = xp.zeros(flat.size, dtype=tap_type)
    chosen_column[:span] = column_tap[:span]
    for i in range(1, g.kh):
        shift = i * row_step
        running_max(xp, result[:span], row_tap[:span], best[shift:shift + span], i, nan_wins,
                     (chosen_column[:span], column_tap[shift:shift + span]))
    return tuple(_on_output_grid(xp, a, plane, g) for a in (result, row_tap, chosen_column))


# --- the kernels pooling.py calls ----------------------------------------------------


def max_values(xp, x, g, fill):
    """The ``(N, C, OH, OW)`` window maxima (no argmax), in ``x``'s format."""
    if uses_edge_slices(x, g):
        return _edge_values(xp, x, g, fill)
    return _flat_values(xp, x, g, fill).copy(order="K")


def max_values_and_taps(xp, x, g, fill):
    """``(values, row tap, column tap)``, each ``(N, C, OH, OW)``: the window maxima and
    which tap ``(i, j)`` of the window holds each (NOTE [ Separable max pooling ])."""
    if uses_edge_slices(x, g):
        return _edge_values_and_taps(xp, x, g, fill)
    best, row_tap, column_tap = _flat_values_and_taps(xp, x, g, fill)
    return best.copy(order="K"), row_tap, column_tap
