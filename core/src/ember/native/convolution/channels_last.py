"""Convolution kernels for channels_last (NHWC) tensors: im2col over NHWC rows, one
matrix product per group whose result is already the NHWC output, and the two adjoints
in the same layout.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (``slow_conv2d`` with
``thnn_conv_use_channels_last``: NHWC columns, the output and both gradients in
channels_last) and aten/src/ATen/native/Convolution.cpp (the output's memory format)
(v2.13).

The three kernels mirror the NCHW ones in ember/native/convolution/convolution.py (NOTE
[ Convolution as a bilinear map ]): ``forward`` is F(x, W), ``input_adjoint`` is
F(., W)^T and ``weight_adjoint`` is F(x, .)^T, so a transposed convolution swaps their
roles here exactly as it does there. On one BLAS thread the fixed rule runs the same
products a few images at a time instead (channels_last_images.py, which reuses this
module's gather, col2im and weight layout).

# NOTE [ Convolution in channels_last ]
# In NHWC memory a window of the image is kh*kw runs of C contiguous channels, so
# im2col gives ROWS: the (N*OH*OW, kh*kw*C) matrix whose row is one window, taps
# outermost and channels innermost. Against the weight laid out as (kh*kw*C, O),
# one product gives (N*OH*OW, O), which IS the NHWC output: the NCHW path's
# transposing copy of the result disappears, and a 1x1 stride-1 convolution needs
# no im2col at all (the image already is its rows). The gather copies C channels
# at a time from each tap, writes zeros where a tap reads the padding, and never
# builds a padded image. The backward keeps the layout: grad_weight is one product
# (O, rows) x (rows, kh*kw*C), which is the weight in channels_last; grad_input is
# the product back to rows, added onto the image tap by tap (col2im in NHWC).
# Groups split the channels: the gather writes a (groups, rows, kh*kw*C/g) block,
# so each group's product still reads contiguous memory.
# Which layout: the output (and both gradients) are channels_last when the input or
# the weight suggests channels_last, as PyTorch's CPU convolutions decide
# (ember/memory_format.py ``suggests_channels_last``).
"""

from ember.dispatcher import Op
from ember.native.convolution import columns as kept_columns
from ember.native.convolution.images import images_per_chunk
from ember.native.fold import geometry, strided_view, tap_slices
from ember.native.support.dispatch_stub import kernel_of


def _rows_shape(g, groups):
    return (groups, g.N, g.OH, g.OW, g.kh, g.kw, g.C // groups)


def channel_split(image, groups):
    """``(N, C, H, W)`` of any strides -> the ``(N, H, W, groups, C/g)`` view."""
    N, C, H, W = image.shape
    return image.transpose(0, 2, 3, 1).reshape(N, H, W, groups, C // groups)


def window_rows(xp, x, g, groups):
    """im2col over NHWC: ``(groups, N*OH*OW, kh*kw*C/g)``, row = one window (taps,
    then channels), zeros where a tap reads the padding."""
    Cg = g.C // groups
    if g.kh == g.kw == 1 and g.sh == g.sw == 1 and g.ph == g.pw == 0:
        source = channel_split(x, groups).transpose(3, 0, 1, 2, 4)  # (G, N, H, W, Cg)
        return source.reshape(groups, g.N * g.L, Cg)  # the image is its own rows
    rows = xp.empty(_rows_shape(g, groups), dtype=x.dtype)
    kernel_of(NHWC_ROWS_INTO, xp)(xp, x, rows, g, groups)
    return rows.reshape(groups, g.N * g.L, g.kh * g.kw * Cg)  # not -1: an empty batch has no rows


# NOTE [ The NHWC gather and col2im as dispatch stubs ]
# The gather of the window rows and col2im's tap-by-tap adds are NumPy passes over
# memory (a padded copy of the image first, then one strided copy; kh*kw slice-adds
# back), where a compiled loop makes one pass with the padding folded in. So each is
# an op whose NumPy code is the generic kernel, as the NCHW im2col and col2im are
# (NOTE [ im2col and col2im as dispatch stubs ] in ember/native/fold.py, ATen's
# DECLARE_DISPATCH / REGISTER_DISPATCH in aten/src/ATen/native/DispatchStub.h):
# ember-numba registers cpu kernels (ember_numba/nhwc_im2col.py), the convolution looks
# the kernel up once per call with ``kernel_of``, and every kernel gives the generic
# one's results bit for bit (the rows are copies; col2im adds each pixel's taps in
# the same order, tap by tap).


def nhwc_rows_into(xp, x, rows, g, groups):
    """Write the window rows of ``x`` ``(N, C, H, W)`` (any strides) into ``rows``, a
    C-contiguous ``(groups, N, OH, OW, kh, kw, C/g)`` array."""
    Cg = g.C // groups
    plane = padded_nhwc(xp, x, g)
    sN, sH, sW, sC = plane.strides
    windows = strided_view(xp, plane, (groups, g.N, g.OH, g.OW, g.kh, g.kw, Cg),
                           (Cg * sC, sN, g.sh * sH, g.sw * sW, g.dh * sH, g.dw * sW, sC))
    rows[...] = windows


def nhwc_col2im_add(xp, window_grads, image, g, groups):
    """Add the C-contiguous ``(groups, n, OH, OW, kh, kw, C/g)`` ``window_grads`` onto
    ``image``, a C-contiguous ``(n, H, W, groups, C/g)`` array, in place: the adjoint of
    :func:`nhwc_rows_into`."""
    _add_taps(xp, image.transpose(3, 0, 1, 2, 4), window_grads, g)


NHWC_ROWS_INTO = Op("native::nhwc_rows_into", nhwc_rows_into)
NHWC_COL2IM_ADD = Op("native::nhwc_col2im_add", nhwc_col2im_add)


def padded_nhwc(xp, x, g):
    """``x`` as an ``(N, Hp, Wp, C)`` array inside a border of zeros."""
    if g.Hp == g.H and g.Wp == g.W:
        return x.transpose(0, 2, 3, 1)
    plane = xp.empty((g.N, g.Hp, g.Wp, g.C), dtype=x.dtype)
    bottom, right = g.ph + g.H, g.pw + g.W
    plane[:, :g.ph] = 0
    plane[:, bottom:] = 0
    plane[:, g.ph:bottom, :g.pw] = 0
    plane[:, g.ph:bottom, right:] = 0
    plane[:, g.ph:bottom, g.pw:right] = x.transpose(0, 2, 3, 1)
    return plane


def weight_matrix(weight, groups):
    """``(O, C/g, kh, kw)`` -> ``(groups, kh*kw*C/g, O/g)``, rows ordered as the window rows."""
    O, Cg, kh, kw = weight.shape
    per_group = weight.reshape(groups, O // groups, Cg, kh, kw).transpose(0, 3, 4, 2, 1)
    return per_group.reshape(groups, kh * kw * Cg, O // groups)


def output_rows(grad, groups):
    """An ``(N, O, OH, OW)`` result or gradient -> ``(groups, N*OH*OW, O/g)`` (a view
    when it is channels_last)."""
    N, O, OH, OW = grad.shape
    per_pixel = grad.transpose(0, 2, 3, 1).reshape(N * OH * OW, groups, O // groups)
    return per_pixel.transpose(1, 0, 2)


def image_from_rows(xp, rows, N, OH, OW):
    """``(groups, N*OH*OW, O/g)`` -> ``(N, O, OH, OW)`` with channels_last strides."""
    groups, _, per_group = rows.shape
    if groups == 1:
        nhwc = rows.reshape(N, OH, OW, per_group)
    else:
        nhwc = xp.empty((N * OH * OW, groups, per_group), dtype=rows.dtype)
        nhwc[...] = rows.transpose(1, 0, 2)
        nhwc = nhwc.reshape(N, OH, OW, groups * per_group)
    return nhwc.transpose(0, 3, 1, 2)


def forward(xp, x, weight, g, groups):
    """F(x, W): the channels_last ``(N, O, OH, OW)`` output (no bias); offers its
    window rows to a capture (ember/native/convolution/columns.py)."""
    windows = window_rows(xp, x, g, groups)
    kept_columns.offer(windows, "rows")
    rows = xp.matmul(windows, weight_matrix(weight, groups))
    return image_from_rows(xp, rows, g.N, g.OH, g.OW)


def input_adjoint(xp, grad, weight, g, groups):
    """F(., W)^T: the ``(N, O, OH, OW)`` gradient -> the channels_last ``(N, C, H, W)``
    image (NOTE [ The input adjoint at stride 1 ])."""
    full = full_correlation(g, grad.shape)
    if full is not None:
        return forward(xp, grad, flipped_weight(weight, groups), full, groups)
    w_t = xp.ascontiguousarray(weight_matrix(weight, groups).transpose(0, 2, 1))  # (G, O/g, K)
    rows = output_rows(grad, groups)
    image = xp.zeros((g.N, g.H, g.W, groups, g.C // groups), dtype=grad.dtype)
    col2im = kernel_of(NHWC_COL2IM_ADD, xp)
    # a few images at a time (NOTE [ col2im a few images at a time ] in images.py)
    per_chunk = images_per_chunk(g.N, w_t.shape[0] * w_t.shape[2] * g.L)
    for start in range(0, g.N, per_chunk):
        stop = min(g.N, start + per_chunk)
        window_grads = xp.matmul(rows[:, start * g.L:stop * g.L], w_t)
        window_grads = window_grads.reshape((groups, stop - start) + _rows_shape(g, groups)[2:])
        col2im(xp, window_grads, image[start:stop], g, groups)
    return image.reshape(g.N, g.H, g.W, g.C).transpose(0, 3, 1, 2)


def _add_taps(xp, target, window_grads, g):
    """col2im in NHWC: each tap's window gradients added onto the pixels it read."""
    for i, j, image_rows, image_columns, out_rows, out_columns in tap_slices(g):
        pixels = target[:, :, image_rows, image_columns]
        xp.add(pixels, window_grads[:, :, out_rows, out_columns, i, j], out=pixels)  # in place, no write-back


# NOTE [ The input adjoint at stride 1 ]
# At stride 1, pixel h of the input is read by output h + p - i*d through tap i, so
# its gradient is a convolution of the output gradient with the kernel flipped in
# space and its two channel dims swapped, over the gradient padded by d*(k-1) - p:
# the "full" correlation. That reuses the forward's gather and one product, and
# skips col2im's kh*kw read-modify-write passes over the image (and the kh*kw times
# larger product it adds up), which cost as much as the product itself. Other
# strides (and padding beyond the kernel's reach) keep the product + col2im.


def full_correlation(g, grad_shape):
    """The geometry of the input adjoint as a convolution of the ``grad_shape`` gradient
    (NOTE [ The input adjoint at stride 1 ]), or None where that does not apply. The
    NCHW kernels use it too."""
    if g.sh != 1 or g.sw != 1 or g.ph > g.dh * (g.kh - 1) or g.pw > g.dw * (g.kw - 1):
        return None
    padding = (g.dh * (g.kh - 1) - g.ph, g.dw * (g.kw - 1) - g.pw)
    return geometry(tuple(grad_shape), (g.kh, g.kw), (1, 1), padding, (g.dh, g.dw), (g.H, g.W))


def flipped_weight(weight, groups):
    """``(O, C/g, kh, kw)`` -> ``(C, O/g, kh, kw)``: per group the channel dims swapped
    and the kernel turned half a turn, the weight of the stride-1 input adjoint."""
    O, Cg, kh, kw = weight.shape
    per_group = weight.reshape(groups, O // groups, Cg, kh, kw)[:, :, :, ::-1, ::-1]
    return per_group.transpose(0, 2, 1, 3, 4).reshape(groups * Cg, O // groups, kh, kw)


def weight_adjoint(xp, x, grad_rows, weight_shape, g, groups):
    """F(x, .)^T: ``(O, C/g, kh, kw)`` with channels_last strides, one product per group,
    against the forward's window rows where they were kept."""
    O, Cg, kh, kw = weight_shape
    windows = kept_columns.take("rows", (groups, g.N * g.L, kh * kw * Cg), x.dtype)
    if windows is None:
        windows = window_rows(xp, x, g, groups)
    per_group = xp.matmul(grad_rows.transpose(0, 2, 1), windows)  # (G, O/g, K)
    return per_group.reshape(O, kh, kw, Cg).transpose(0, 3, 1, 2)
