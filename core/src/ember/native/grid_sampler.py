"""``grid_sample`` (read an image at arbitrary points) and ``affine_grid`` (the points of an
affine transform): the two halves of a spatial transformer.

PyTorch counterpart: aten/src/ATen/native/GridSampler.cpp and GridSampler.h
(``grid_sampler_2d``, ``grid_sampler_3d``, their coordinate helpers),
AffineGridGenerator.cpp and torch/nn/functional.py (``grid_sample``, ``affine_grid``)
(v2.13).

``grid[..., 0]`` is x (width), ``[..., 1]`` y (height), ``[..., 2]`` z (depth), each in
[-1, 1] across the input. A point is unnormalised to pixel units, moved by the padding
mode (``border`` clips it into the image, ``reflection`` mirrors it at the edges;
``zeros`` leaves it, and taps outside read 0), then interpolated from its neighbours:
``bilinear`` (trilinear on volumes) weighs the 2 (or 2^3) corners by their opposite
areas, ``nearest`` takes the closest pixel (ties to even), ``bicubic`` (images only)
weighs 4x4 pixels by Keys' cubic convolution, its padding applied to each tap's index.

Both functions are compositions of ember ops (the taps are picks of the input's channel
rows, NOTE [ Grid sampling's taps as row picks ]), so autograd gives the gradients of the
input and of the grid (through the interpolation weights and the coordinate maps) and
their double backward. The clips are ``where``s, so a clipped coordinate passes no
gradient, as torch's ``clip_coordinates_set_grad``.
"""

import itertools

from ember.dispatcher import NONE, Op
from ember.native.indexing.indexing import where

MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


# --- coordinates -------------------------------------------------------------------


def _unnormalize(coordinate, size, align_corners):
    """[-1, 1] to pixel units: -1 and 1 are the corner pixels' centres (``align_corners``)
    or the image's outer edges."""
    if align_corners:
        return (coordinate + 1) / 2 * (size - 1)
    return ((coordinate + 1) * size - 1) / 2


def _clip(coordinate, size):
    """Into ``[0, size - 1]``; a clipped coordinate passes no gradient."""
    return where(coordinate <= 0, 0.0, where(coordinate >= size - 1, float(size - 1), coordinate))


def _reflect(coordinate, twice_low, twice_high):
    """Mirror ``coordinate`` at ``twice_low / 2`` and ``twice_high / 2`` until it lies between."""
    if twice_low == twice_high:
        return coordinate * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = (coordinate - low).abs()
    extra = distance.fmod(span)
    flips = (distance / span).floor()
    return where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _apply_padding(coordinate, size, padding_mode, align_corners):
    """The coordinate moved as the padding mode says (``zeros`` leaves it)."""
    if padding_mode == "border":
        return _clip(coordinate, size)
    if padding_mode == "reflection":
        if align_corners:
            return _reflect(coordinate, 0, 2 * (size - 1))
        return _clip(_reflect(coordinate, -1, 2 * size - 1), size)
    return coordinate


def _finite(coordinate):
    """NaN and infinite tap indices read as far outside (torch's ``safe_downgrade_to_int_range``);
    the weights keep the NaN, so a NaN coordinate gives a NaN output where weights apply."""
    return where(coordinate.isfinite(), coordinate, -100.0)


# --- reading taps --------------------------------------------------------------------


def _take_rows_kernel(xp, table, position):
    """``table[n, position[n, l], :]``: ``(N, R, C)`` rows picked by ``(N, L)`` -> ``(N, L, C)``."""
    return table[xp.arange(table.shape[0])[:, None], position]


def _take_rows_backward(ctx, grad):
    table, position = ctx.saved_inputs
    return ADD_ROWS(grad, position, rows=table.shape[1]), None


def _add_rows_kernel(xp, grad, position, rows):
    """The adjoint of the pick: each ``grad[n, l, :]`` added into row ``position[n, l]`` of
    zeros ``(N, rows, C)``, by one ``bincount`` over (image, row, channel) numbers."""
    N, L, C = grad.shape
    row = (xp.arange(N)[:, None] * rows + position)[:, :, None] * C + xp.arange(C)
    total = xp.bincount(row.ravel(), weights=grad.ravel(), minlength=N * rows * C)
    return total.astype(grad.dtype, copy=False).reshape(N, rows, C)


def _add_rows_backward(ctx, grad):
    (_, position) = ctx.saved_inputs
    return TAKE_ROWS(grad, position), None


# NOTE [ Grid sampling's taps as row picks ]
# Every tap reads all C channels of one pixel. With the input viewed channels-last,
# (N, H*W, C), a tap is a pick of whole rows, and its backward adds whole rows back:
# two small ops, adjoint to each other (so double backward comes free), written once
# for every mode and for images and volumes. Everything else (coordinates, padding,
# weights) is elementwise ember ops on (N, H_out, W_out), where autograd finds the
# grid's gradient. Picking rows where a gather along the flattened NCHW planes
# expanded the index over channels cut a (8, 16, 64, 64) bilinear forward by 10x.
TAKE_ROWS = Op("aten::_grid_sampler_take_rows", _take_rows_kernel, _take_rows_backward, promote=NONE,
               save="inputs")
ADD_ROWS = Op("aten::_grid_sampler_add_rows", _add_rows_kernel, _add_rows_backward, promote=NONE, save="inputs")


def _tap(rows, sizes, indices):
    """``input[n, :, *indices]`` for every output point and where the point lies inside:
    ``rows`` is the input channels-last, ``(N, prod(sizes), C)``; ``indices`` are
    integer-valued float tensors ``(N, *out)``, one per spatial dim (depth first).
    Returns the rows ``(N, L, C)`` (an outside index reads a clamped pixel) and the
    ``(N, *out)`` mask of the points inside, which the caller folds into its weight:
    zeroing the weight of an outside tap, not the tap's C values."""
    inside = None
    position = None
    for index, size in zip(indices, sizes):
        index = _finite(index)
        within = (index >= 0) & (index <= size - 1)
        inside = within if inside is None else inside & within
        clamped = index.clamp(0, size - 1).long()
        position = clamped if position is None else position * size + clamped
    N = rows.shape[0]
    return TAKE_ROWS(rows, position.reshape(N, -1)), inside.to(rows.dtype)


def _per_point(weight):
    """An ``(N, *out)`` weight as ``(N, L, 1)``, to scale a tap's rows."""
    return weight.reshape(weight.shape[0], -1, 1)


def _linear(flat, sizes, coordinates):
    """Each point's 2^d corners, each weighed by the volume of the box opposite it."""
    floors = [c.floor() for c in coordinates]
    total = None
    for corner in itertools.product((0, 1), repeat=len(coordinates)):
        weight = None
        for c, low, high_side in zip(coordinates, floors, corner):
            # the upper neighbour's weight is c - low, the lower's low + 1 - c
            factor = c - low if high_side else low + 1 - c
            weight = factor if weight is None else weight * factor
        value, inside = _tap(flat, sizes, [low + side for low, side in zip(floors, corner)])
        term = value * _per_point(weight * inside)
        total = term if total is None else total + term
    return total


def _nearest(flat, sizes, coordinates):
    value, inside = _tap(flat, sizes, [c.detach().round() for c in coordinates])
    return value * _per_point(inside)


def _cubic_weights(t):
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for a fraction ``t``."""
    from ember.native.upsampling import _cubic_far, _cubic_near

    rest = 1 - t
    return _cubic_far(t + 1), _cubic_near(t), _cubic_near(rest), _cubic_far(rest + 1)


def _bicubic(flat, sizes, coordinates, padding_mode, align_corners):
    """4x4 taps; the padding mode moves each tap's (integer) index, not the point."""
    (y, x), (H, W) = coordinates, sizes
    y0, x0 = y.floor(), x.floor()
    y_weights, x_weights = _cubic_weights(y - y0), _cubic_weights(x - x0)
    columns = [_apply_padding(x0 + (j - 1), W, padding_mode, align_corners).detach() for j in range(4)]
    total = None
    for i, y_weight in enumerate(y_weights):  # each row interpolated along x, then the rows along y
        row_index = _apply_padding(y0 + (i - 1), H, padding_mode, align_corners).detach()
        row = None
        for column, x_weight in zip(columns, x_weights):
            value, inside = _tap(flat, sizes, [row_index, column])
            term = value * _per_point(x_weight * inside)
            row = term if row is None else row + term
        total = row * _per_point(y_weight) if total is None else total + row * _per_point(y_weight)
    return total


# --- public functions ----------------------------------------------------------------


def _check(input, grid, interpolation_mode):
    def sizes(t):
        return list(t.shape)

    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_scalar(input.dtype)} but found {_scalar(grid.dtype)}")
    if grid.shape[-1] != input.ndim - 2:  # torch checks this first
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {sizes(grid)}")
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {sizes(input)} and grid with sizes {sizes(grid)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {sizes(input)} and grid with sizes {sizes(grid)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {sizes(input)} with dimension {d} being empty")
    if interpolation_mode == MODES["bicubic"] and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _scalar(dtype):
    from ember.native.factory import _legacy_name

    return _legacy_name(dtype)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sample`` with torch's enum arguments (mode 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection), for 4-D and 5-D inputs."""
    _check(input, grid, interpolation_mode)
    mode = {v: k for k, v in MODES.items()}[interpolation_mode]
    padding = {v: k for k, v in PADDING_MODES.items()}[padding_mode]
    sizes = tuple(input.shape[2:])  # (H, W) or (D, H, W)
    # grid's last dim runs x, y(, z): reversed, the coordinates line up with sizes
    axes = reversed(range(len(sizes)))
    coordinates = [_unnormalize(grid[..., k], size, align_corners) for k, size in zip(axes, sizes)]
    out_shape = (input.shape[0], input.shape[1]) + tuple(grid.shape[1:-1])
    if input.shape[0] == 0 or input.shape[1] == 0:
        return input.new_zeros(out_shape)
    rows = input.flatten(2).transpose(1, 2).contiguous()  # NOTE [ Grid sampling's taps as row picks ]
    if mode == "bicubic":
        picked = _bicubic(rows, sizes, coordinates, padding, align_corners)
    else:
        coordinates = [_apply_padding(c, size, padding, align_corners) for c, size in zip(coordinates, sizes)]
        picked = (_nearest if mode == "nearest" else _linear)(rows, sizes, coordinates)
    # (N, L, C) -> (N, C, *out), laid out row-major as torch's
    return picked.transpose(1, 2).contiguous().reshape(out_shape)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` on ``(N, C, H, W)`` images with an ``(N, H_out, W_out, 2)`` grid."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`grid_sampler` on ``(N, C, D, H, W)`` volumes with an ``(N, D_out, H_out, W_out, 3)`` grid."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the points of ``grid`` (coordinates in [-1, 1]): ``(N, C, H, W)``
    with ``(N, H_out, W_out, 2)`` gives ``(N, C, H_out, W_out)``; volumes likewise with 3
    coordinates. ``mode`` is ``'bilinear'``, ``'nearest'`` or ``'bicubic'`` (images only);
    ``padding_mode`` ``'zeros'``, ``'border'`` or ``'reflection'``.

    >>> import ember
    >>> image = ember.arange(4.).view(1, 1, 2, 2)
    >>> ember.nn.functional.grid_sample(image, ember.zeros(1, 1, 1, 2), align_corners=True).item()
    1.5
    """
    if mode not in MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        import warnings

        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, MODES[mode], PADDING_MODES[padding_mode], align_corners)


def _base_coordinates(theta, steps, align_corners):
    """``steps`` points across [-1, 1]: the pixel centres (``align_corners``), or the
    centres of ``steps`` equal cells; one point is 0."""
    from ember.native.factory import linspace, zeros

    if steps <= 1:
        return zeros(max(steps, 1), dtype=theta.dtype, device=theta.device)[:steps]
    points = linspace(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    return points if align_corners else points * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` (``(N, 2, 3)`` for images of ``size``
    ``(N, C, H, W)``, ``(N, 3, 4)`` for volumes): each output pixel's normalised
    coordinates ``[x, y(, z), 1]`` times ``theta^T``. Its gradient reaches ``theta``.

    >>> import ember
    >>> identity = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> ember.nn.functional.affine_grid(identity, (1, 1, 2, 2), align_corners=True)[0, 0].tolist()
    [[-1.0, -1.0], [1.0, -1.0]]
    """
    if align_corners is None:
        import warnings

        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = list(size)[2:]
    if align_corners and min(spatial) == 1:
        import warnings

        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine_grid(theta, size, align_corners)


def _affine_grid(theta, size, align_corners):
    from ember.native.factory import ones
    from ember.native.shape.shape import stack

    N, spatial = size[0], list(size)[2:]
    # per spatial dim (depth first) its coordinates, broadcast over the output grid
    axes = [_base_coordinates(theta, steps, align_corners) for steps in spatial]
    shape = tuple(spatial)
    columns = []
    for d, axis in enumerate(axes):
        view = [1] * len(spatial)
        view[d] = -1
        columns.append(axis.reshape(view).expand(shape))
    # [x, y(, z), 1]: the last spatial dim (width) first
    base = stack(columns[::-1] + [ones(shape, dtype=theta.dtype, device=theta.device)], -1)
    points = base.reshape(1, -1, len(spatial) + 1)
    grid = points @ theta.transpose(1, 2)  # (N, H*W, k)
    return grid.reshape([N] + list(spatial) + [len(spatial)])
