"""``torchvision::deform_conv2d`` and ``torchvision::_deform_conv2d_backward``: the schema,
the NumPy reference kernels, and the autograd formula that ties the two ops together.

PyTorch counterpart: torchvision/csrc/ops/deform_conv2d.cpp (the schema,
``TORCH_LIBRARY_FRAGMENT``), csrc/ops/cpu/deform_conv2d_kernel.cpp (the CPU kernels) and
csrc/ops/autograd/deform_conv2d_kernel.cpp (the autograd kernel) (torchvision 0.28).

    torchvision::deform_conv2d(input, weight, offset, mask, bias, *, stride_h, stride_w,
        pad_h, pad_w, dilation_h, dilation_w, groups, offset_groups, use_mask) -> Tensor
    torchvision::_deform_conv2d_backward(grad, input, weight, offset, mask, bias, *, ...)
        -> (grad_input, grad_weight, grad_offset, grad_mask, grad_bias)

# NOTE [ Deformable convolution as im2col ]
# A convolution reads, for output position (oh, ow) and kernel tap (i, j), the input at
# ``(oh * stride - pad + i * dilation, ow * stride - pad + j * dilation)``. A deformable
# one adds a learned offset (dy, dx) per output position and tap, so it reads between
# pixels: the value there is the bilinear mix of its four neighbours, neighbours outside
# the image counting as 0, and the whole sample 0 once the point is a full pixel or more
# outside (``y <= -1`` or ``y >= height``, and the same in x). DCNv2 multiplies each
# sample by a mask value in [0, 1] (``use_mask``). Offsets and masks come in
# ``offset_groups`` groups of input channels: the channels of one group share them.
#
# torchvision computes it the way its (and ember's) plain convolution does: sample every
# (channel, tap) row for every output position into a matrix of *columns*
# (``deformable_im2col``), then multiply by the weight, one GEMM per weight group. The
# backward runs the same road in reverse: columns' gradient = weight^T @ grad; the
# input's gradient scatters it back onto the four neighbours (``deformable_col2im``); an
# offset's gradient is the column gradient times the derivative of the bilinear mix
# along y or x (``coordinate_weight``), summed over the channels of its group; a mask's
# is the column gradient times the sample, summed the same way.
#
# The sampling is the one step that loops per element in C++; here it is a few whole-
# array NumPy expressions, written in the order torchvision's ``bilinear_interpolate``
# adds (w1*v1 + w2*v2 + w3*v3 + w4*v4), so that a compiled loop doing the same
# arithmetic per element gives the same bits (ember_vision/ops/deform_conv2d_loops.py).
"""

from collections import namedtuple

from ember import library

Geometry = namedtuple("Geometry", "kh kw sh sw ph pw dh dw out_h out_w groups offset_groups use_mask")


def check_arguments(input, weight, offset, mask, *, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                    groups, offset_groups, use_mask):
    """The checks of torchvision's ``deform_conv2d_forward_kernel``, with its messages;
    returns the ``Geometry`` of the call."""
    if use_mask and mask is None:
        raise RuntimeError("use_mask is set but mask is None")
    arrays = (("input", input), ("offset", offset), ("weight", weight)) + ((("mask", mask),) if use_mask else ())
    for name, array in arrays:
        if array.ndim != 4:
            raise RuntimeError(f"{name} must be a 4-d tensor, got {array.ndim} dimensions")
    n, channels, height, width = input.shape
    kh, kw = weight.shape[2:]
    _require(kh > 0 and kw > 0, f"weight_h: {kh} weight_w: {kw}")
    _require(stride_h > 0 and stride_w > 0, f"stride_h: {stride_h} stride_w: {stride_w}")
    _require(pad_h >= 0 and pad_w >= 0, f"pad_h: {pad_h} pad_w: {pad_w}")
    _require(dilation_h > 0 and dilation_w > 0, f"dilation_h: {dilation_h} dilation_w: {dilation_w}")
    _require(groups > 0 and weight.shape[1] * groups == channels,
             f"weight.shape[1] * groups must equal input.shape[1]: got {weight.shape[1]} * {groups} != {channels}")
    _require(weight.shape[0] % groups == 0,
             f"weight.shape[0] must be divisible by groups: got {weight.shape[0]} and {groups}")
    _require(offset.shape[1] == offset_groups * 2 * kh * kw,
             f"offset.shape[1] is not valid: got: {offset.shape[1]} expected: {offset_groups * 2 * kh * kw}")
    if use_mask:
        _require(mask.shape[1] == offset_groups * kh * kw,
                 f"mask.shape[1] is not valid: got: {mask.shape[1]} expected: {offset_groups * kh * kw}")
    _require(offset_groups > 0 and channels % offset_groups == 0,
             f"input.shape[1] must be divisible by offset_groups: got {channels} and {offset_groups}")
    _require(offset.shape[0] == n, "invalid batch size of offset")
    out_h = (height + 2 * pad_h - (dilation_h * (kh - 1) + 1)) // stride_h + 1
    out_w = (width + 2 * pad_w - (dilation_w * (kw - 1) + 1)) // stride_w + 1
    _require(offset.shape[2:] == (out_h, out_w), f"offset output dims: ({offset.shape[2]}, {offset.shape[3]}) - "
                                                 f"computed output dims: ({out_h}, {out_w})")
    if use_mask:
        _require(mask.shape[0] == n, "invalid batch size of mask")
        _require(mask.shape[2:] == (out_h, out_w), f"mask output dims: ({mask.shape[2]}, {mask.shape[3]}) - "
                                                   f"computed output dims: ({out_h}, {out_w})")
    _require(out_h > 0 and out_w > 0, f"Calculated output size too small - out_h: {out_h} out_w: {out_w}")
    return Geometry(kh, kw, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, out_h, out_w, groups,
                    offset_groups, use_mask)


def _require(condition, message):
    if not condition:
        raise RuntimeError(message)


def base_positions(xp, geometry, dtype):
    """Where each tap reads without offset: ``rows[i * out_h + oh] = oh * sh - ph + i * dh``
    and ``cols[j * out_w + ow]`` likewise, in the input's float dtype."""
    g = geometry
    rows = xp.arange(g.out_h)[None, :] * g.sh - g.ph + xp.arange(g.kh)[:, None] * g.dh
    cols = xp.arange(g.out_w)[None, :] * g.sw - g.pw + xp.arange(g.kw)[:, None] * g.dw
    return rows.reshape(-1).astype(dtype), cols.reshape(-1).astype(dtype)


def sampling_points(xp, offset, geometry):
    """``(y, x)``, each (N, offset_groups, kh * kw, out_h * out_w): where every tap of
    every output position reads, base position plus its offset (NOTE above)."""
    g = geometry
    n = offset.shape[0]
    rows, cols = base_positions(xp, g, offset.dtype)
    rows = xp.broadcast_to(rows.reshape(g.kh, 1, g.out_h, 1), (g.kh, g.kw, g.out_h, g.out_w))
    cols = xp.broadcast_to(cols.reshape(1, g.kw, 1, g.out_w), (g.kh, g.kw, g.out_h, g.out_w))
    pairs = offset.reshape(n, g.offset_groups, g.kh * g.kw, 2, g.out_h * g.out_w)
    y = rows.reshape(g.kh * g.kw, -1) + pairs[:, :, :, 0]
    x = cols.reshape(g.kh * g.kw, -1) + pairs[:, :, :, 1]
    return y, x


def neighbours(xp, y, x, height, width):
    """The four pixels around each point ``(y, x)``, as torchvision's ``bilinear_interpolate``
    reads them: ``[(flat index, weight, inside the image)]`` for (low, low), (low, high),
    (high, low), (high, high), and the low and high weights along y and x."""
    y_low, x_low = xp.floor(y), xp.floor(x)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx
    y0, x0 = y_low.astype(xp.int64), x_low.astype(xp.int64)
    corners = []
    for cy, cx, weight in ((y0, x0, hy * hx), (y0, x0 + 1, hy * lx), (y0 + 1, x0, ly * hx), (y0 + 1, x0 + 1, ly * lx)):
        valid = (cy >= 0) & (cy < height) & (cx >= 0) & (cx < width)
        corners.append((xp.where(valid, cy * width + cx, 0), weight, valid))
    return corners, (ly, lx, hy, hx)


def corner_values(xp, input, corners, geometry):
    """The four neighbours' values for every channel, each (N, offset_groups,
    channels per group, kh * kw, out_h * out_w); 0 where a neighbour is outside."""
    n, channels, height, width = input.shape
    og = geometry.offset_groups
    images = input.reshape(n, og, channels // og, height * width)
    values = []
    for index, _, valid in corners:
        taps, points = index.shape[2:]
        picked = xp.take_along_axis(images, index.reshape(n, og, 1, taps * points), axis=3)
        picked = picked.reshape(n, og, channels // og, taps, points)
        values.append(xp.where(valid[:, :, None], picked, 0))
    return values


def inside(y, x, height, width):
    """Whether a point is sampled at all: less than a pixel outside the image."""
    return (y > -1) & (y < height) & (x > -1) & (x < width)


def bilinear(xp, values, corners, y, x, height, width):
    """The bilinear samples, (N, offset_groups, channels per group, taps, points): the
    four neighbours weighted in torchvision's order, 0 outside (NOTE above)."""
    # the weights, one per point, broadcast over the channels of its offset group
    w1, w2, w3, w4 = (weight[:, :, None] for _, weight, _ in corners)
    v1, v2, v3, v4 = values
    sample = w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
    return xp.where(inside(y, x, height, width)[:, :, None], sample, 0)


def deformable_im2col(xp, input, offset, mask, geometry):
    """The columns, (N, channels * kh * kw, out_h * out_w): row
    ``c * kh * kw + i * kw + j`` holds channel c sampled at tap (i, j) for every output
    position, times its mask value under DCNv2. The reference for every other
    sampling kernel (the compiled one, the CUDA one), which must give these bits."""
    n, channels, height, width = input.shape
    y, x = sampling_points(xp, offset, geometry)
    corners, _ = neighbours(xp, y, x, height, width)
    values = corner_values(xp, input, corners, geometry)
    columns = bilinear(xp, values, corners, y, x, height, width)
    if geometry.use_mask:
        columns = _per_group(mask, geometry)[:, :, None] * columns
    rows = channels * geometry.kh * geometry.kw
    return columns.reshape(n, rows, geometry.out_h * geometry.out_w)


def _per_group(array, geometry):
    """An (N, offset_groups * kh * kw, out_h, out_w) mask as (N, offset_groups, taps, points)."""
    return array.reshape(array.shape[0], geometry.offset_groups, geometry.kh * geometry.kw,
                         geometry.out_h * geometry.out_w)


def columns_times_weight(xp, columns, weight, bias, geometry):
    """The GEMM of the im2col form: per weight group, ``weight (out/groups, c/groups * taps)
    @ columns (c/groups * taps, points)``, for every image at once; plus the bias."""
    n, groups = columns.shape[0], geometry.groups
    out_channels = weight.shape[0]
    grouped = columns.reshape(n, groups, columns.shape[1] // groups, columns.shape[2])
    out = xp.matmul(weight.reshape(groups, out_channels // groups, -1), grouped)
    out = out.reshape(n, out_channels, geometry.out_h, geometry.out_w)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out


def forward(xp, input, weight, offset, mask, bias, attrs, im2col):
    """The forward of every deform_conv2d kernel: check, ``im2col`` (the reference
    ``deformable_im2col``, or a faster one giving its bits), GEMM."""
    geometry = check_arguments(input, weight, offset, mask, **attrs)
    columns = im2col(xp, input, offset, mask, geometry)
    return columns_times_weight(xp, columns, weight, bias, geometry)


@library.custom_op("torchvision::deform_conv2d", save="inputs")
def deform_conv2d(xp, input, weight, offset, mask, bias, *,
                  stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                  groups, offset_groups, use_mask):
    """Deformable convolution, the reference kernel: bilinear sampling into columns, then
    a GEMM per weight group (the im2col form, NOTE [ Deformable convolution as im2col ]).
    ``mask`` and ``bias`` may be None; ``mask`` is read only with ``use_mask``.

    >>> import ember
    >>> x = ember.arange(9.0).reshape(1, 1, 3, 3)
    >>> offset = ember.full((1, 8, 2, 2), 0.5)
    >>> ember.ops.torchvision.deform_conv2d(x, ember.ones(1, 1, 2, 2), offset, None, None, stride_h=1, stride_w=1,
    ...     pad_h=0, pad_w=0, dilation_h=1, dilation_w=1, groups=1, offset_groups=1, use_mask=False)
    tensor([[[[16., 14.],
              [18., 15.]]]])
    """
    attrs = dict(stride_h=stride_h, stride_w=stride_w, pad_h=pad_h, pad_w=pad_w, dilation_h=dilation_h,
                 dilation_w=dilation_w, groups=groups, offset_groups=offset_groups, use_mask=use_mask)
    return forward(xp, input, weight, offset, mask, bias, attrs, deformable_im2col)


@library.custom_op("torchvision::_deform_conv2d_backward", num_outputs=5)
def deform_conv2d_backward(xp, grad, input, weight, offset, mask, bias, *,
                           stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                           groups, offset_groups, use_mask):
    """The gradients of ``torchvision::deform_conv2d`` for input, weight, offset, mask and
    bias, as torchvision's ``deform_conv2d_backward_kernel`` returns them (no autograd of
    its own: torchvision refuses double backward too). Without ``use_mask`` the mask's
    gradient is zeros shaped like the mask ``use_mask`` would read."""
    g = check_arguments(input, weight, offset, mask, stride_h=stride_h, stride_w=stride_w, pad_h=pad_h,
                        pad_w=pad_w, dilation_h=dilation_h, dilation_w=dilation_w, groups=groups,
                        offset_groups=offset_groups, use_mask=use_mask)
    n, channels, height, width = input.shape
    y, x = sampling_points(xp, offset, g)
    corners, weights = neighbours(xp, y, x, height, width)
    values = corner_values(xp, input, corners, g)
    samples = bilinear(xp, values, corners, y, x, height, width)
    grad_columns = _grad_columns(xp, grad, weight, g)  # (N, offset groups, channels per group, taps, points)
    masked = grad_columns * _per_group(mask, g)[:, :, None] if use_mask else grad_columns
    columns = samples * _per_group(mask, g)[:, :, None] if use_mask else samples
    grad_input = deformable_col2im(xp, masked, corners, y, x, input.shape)
    grad_offset = _grad_offset(xp, masked, values, weights).reshape(offset.shape)
    if use_mask:
        grad_mask = (grad_columns * samples).sum(axis=2).reshape(mask.shape)
    else:
        grad_mask = xp.zeros((n, offset_groups * g.kh * g.kw, g.out_h, g.out_w), dtype=input.dtype)
    grad_weight = _grad_weight(xp, grad, columns.reshape(n, channels * g.kh * g.kw, g.out_h * g.out_w), weight.shape,
                               g)
    grad_bias = grad.sum(axis=(0, 2, 3))
    return grad_input, grad_weight, grad_offset, grad_mask, grad_bias


def backward(xp, grad, input, weight, offset, mask, bias, attrs, im2col, col2im, col2im_coord):
    """The backward of every faster deform_conv2d kernel (compiled, CUDA): the reference's
    GEMMs around its per-element steps, done by ``im2col`` (as ``forward`` takes it),
    ``col2im(xp, masked, offset, rows, cols, input_shape, geometry)`` (the input's
    gradient) and ``col2im_coord(xp, grad_columns, masked, input, offset, rows, cols,
    geometry)`` (the offsets' and mask's gradients, (N, offset groups * taps, 2, points)
    and (N, offset groups * taps, points)); ``masked`` is the columns' gradient times the
    mask, both (N, C, taps, points)."""
    g = check_arguments(input, weight, offset, mask, **attrs)
    n, channels = input.shape[:2]
    taps, points = g.kh * g.kw, g.out_h * g.out_w
    grad_columns = _grad_columns(xp, grad, weight, g)
    masked = grad_columns * _per_group(mask, g)[:, :, None] if g.use_mask else grad_columns
    grad_columns, masked = (xp.ascontiguousarray(a.reshape(n, channels, taps, points)) for a in (grad_columns, masked))
    input, offset = xp.ascontiguousarray(input), xp.ascontiguousarray(offset)
    rows, cols = base_positions(xp, g, input.dtype)
    grad_input = col2im(xp, masked, offset, rows, cols, input.shape, g)
    grad_offset, grad_mask = col2im_coord(xp, grad_columns, masked, input, offset, rows, cols, g)
    grad_weight = _grad_weight(xp, grad, im2col(xp, input, offset, mask, g), weight.shape, g)
    return (grad_input, grad_weight, grad_offset.reshape(offset.shape),
            grad_mask.reshape(n, g.offset_groups * taps, g.out_h, g.out_w), grad.sum(axis=(0, 2, 3)))


def _grad_columns(xp, grad, weight, geometry):
    """``weight^T @ grad`` per weight group: the gradient of the columns, shaped as the
    samples (N, offset groups, channels per group, taps, points)."""
    n, out_channels = grad.shape[:2]
    groups, og = geometry.groups, geometry.offset_groups
    w_t = xp.swapaxes(weight.reshape(groups, out_channels // groups, -1), 1, 2)
    points = geometry.out_h * geometry.out_w
    columns = xp.matmul(w_t, grad.reshape(n, groups, out_channels // groups, points))
    channels = weight.shape[1] * groups
    return columns.reshape(n, og, channels // og, geometry.kh * geometry.kw, points)


def _grad_weight(xp, grad, columns, weight_shape, geometry):
    """``grad @ columns^T`` per weight group, summed over the images."""
    n, out_channels = grad.shape[:2]
    groups = geometry.groups
    points = geometry.out_h * geometry.out_w
    grad_rows = xp.moveaxis(grad.reshape(n, groups, out_channels // groups, points), 0, 2)
    column_rows = xp.moveaxis(columns.reshape(n, groups, columns.shape[1] // groups, points), 0, 2)
    grad_rows = grad_rows.reshape(groups, out_channels // groups, n * points)
    column_rows = column_rows.reshape(groups, columns.shape[1] // groups, n * points)
    return xp.matmul(grad_rows, xp.swapaxes(column_rows, 1, 2)).reshape(weight_shape)


def deformable_col2im(xp, grad_columns, corners, y, x, input_shape):
    """The input's gradient: each column gradient added onto the four neighbours it was
    sampled from, with their bilinear weights (torchvision's ``deformable_col2im``). The
    adds are one weighted histogram (``bincount``) over the flat input, so that their
    order, and so the result, is fixed."""
    n, channels, height, width = input_shape
    og = grad_columns.shape[1]
    sampled = inside(y, x, height, width)[:, :, None]
    images = (xp.arange(n * channels).reshape(n, og, channels // og, 1, 1)) * (height * width)
    indices, weights = [], []
    for index, weight, valid in corners:
        indices.append((images + index[:, :, None]).reshape(-1))
        weights.append(xp.where(sampled & valid[:, :, None], weight[:, :, None] * grad_columns, 0).reshape(-1))
    total = xp.bincount(xp.concatenate(indices), weights=xp.concatenate(weights), minlength=n * channels * height
                        * width)
    return total.astype(grad_columns.dtype).reshape(input_shape)


def _grad_offset(xp, grad_columns, values, weights):
    """The offsets' gradient, (N, offset groups, taps, 2, points): the column gradient
    (already times the mask) times the bilinear mix's derivative along y and along x
    (torchvision's ``get_coordinate_weight``), summed over a group's channels."""
    v1, v2, v3, v4 = values
    ly, lx, hy, hx = (w[:, :, None] for w in weights)
    along_y = lx * (v4 - v2) + hx * (v3 - v1)
    along_x = ly * (v4 - v3) + hy * (v2 - v1)
    return xp.stack([(grad_columns * along_y).sum(axis=2), (grad_columns * along_x).sum(axis=2)], axis=3)


def _deform_conv2d_formula(ctx, grad):
    """The autograd kernel: one call of the backward op (torchvision's
    ``DeformConv2dFunction::backward``), each gradient kept where its input needs
    one."""
    input, weight, offset, mask, bias = ctx.saved_inputs
    grads = deform_conv2d_backward(grad, input, weight, offset, mask, bias,
                                   **ctx.attrs)
    grad_input, grad_weight, grad_offset, grad_mask, grad_bias = grads
    if mask is None:
        grad_mask = None
    if bias is None:
        grad_bias = None
    mine = (grad_input, grad_weight, grad_offset, grad_mask, grad_bias)
    return tuple(g if need else None for g, need in zip(mine, ctx.needs_input_grad))


library.register_autograd(deform_conv2d, _deform_conv2d_formula)
deform_conv2d.backward_name = "DeformConv2dFunctionBackward"  # torchvision's autograd Function
OPS = (deform_conv2d, deform_conv2d_backward)
