"""Sliding windows: ``im2col`` (``F.unfold``) and ``col2im`` (``F.fold``), and the
array-level window helpers that convolution and pooling are built on.

PyTorch counterpart: aten/src/ATen/native/Im2Col.cpp, Col2Im.cpp, im2col.h and the
``im2col``/``col2im`` entries of derivatives.yaml (v2.13).

Everything here works on 4-D arrays ``(N, C, H, W)``; 1-D ops lift their input to
``H = 1``. The helpers use only functions NumPy and CuPy share (``as_strided``,
slicing, ``matmul``), so they serve every backend.

# NOTE [ Windows as strided views ]
# A window of a padded image starts at ``(oh * stride, ow * stride)`` and its tap
# ``(i, j)`` sits ``(i * dilation, j * dilation)`` further on, so the array of all
# windows ``(N, C, kh, kw, OH, OW)`` is a strided *view* of the padded image: no copy.
# ``im2col`` is that view reshaped to ``(N, C*kh*kw, OH*OW)``, which copies it once
# ("image to columns"); a convolution is then one matrix product with the weights.
# ``col2im`` is the adjoint: it adds every column back onto the pixels its window
# covers, one vectorised slice-add per tap (kh*kw of them), never a loop over pixels.
"""

from functools import lru_cache

from ember.dispatcher import NONE, Op
from ember.memory_format import array_suggests_channels_last


class Geometry:
    """Sizes of one windowed pass over ``(N, C, H, W)`` images, all plain ints.

    ``kernel``, ``stride``, ``padding``, ``dilation`` are pairs; ``out_size`` defaults
    to the number of windows that fit (pooling's ceil mode and transposed convolution
    pass their own, and the padded extent grows to reach the last window). Never
    changed once made: :func:`geometry` hands the same one to every call of its sizes.
    """

    __slots__ = ("N", "C", "H", "W", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "OH", "OW",
                 "Hp", "Wp")

    def __init__(self, shape, kernel, stride, padding, dilation, out_size=None):
        self.N, self.C, self.H, self.W = shape
        (self.kh, self.kw), (self.sh, self.sw) = kernel, stride
        (self.ph, self.pw), (self.dh, self.dw) = padding, dilation
        if out_size is None:
            out_size = (window_count(self.H, self.kh, self.sh, self.ph, self.dh),
                        window_count(self.W, self.kw, self.sw, self.pw, self.dw))
        self.OH, self.OW = out_size
        # The padded extent the windows reach (ceil mode may reach past H + 2p).
        self.Hp = max(self.H + 2 * self.ph, (self.OH - 1) * self.sh + self.dh * (self.kh - 1) + 1)
        self.Wp = max(self.W + 2 * self.pw, (self.OW - 1) * self.sw + self.dw * (self.kw - 1) + 1)

    @property
    def L(self):
        """Windows (columns) per image."""
        return self.OH * self.OW

    def padded(self, xp, x, fill=0):
        """``x`` inside a buffer of the padded size, filled with ``fill``; channels_last
        when ``x`` suggests it (so the taps' slices read and write NHWC memory)."""
        channels_last = array_suggests_channels_last(x)
        N, C = x.shape[:2]
        shape = (N, self.Hp, self.Wp, C) if channels_last else (N, C, self.Hp, self.Wp)
        # zeros where the fill is 0: the same buffer, for a third of full's cost
        plane = xp.zeros(shape, dtype=x.dtype) if fill == 0 else xp.full(shape, fill, dtype=x.dtype)
        if channels_last:
            plane = plane.transpose(0, 3, 1, 2)
        plane[:, :, self.ph:self.ph + self.H, self.pw:self.pw + self.W] = x
        return plane

    def windows(self, xp, plane):
        """The ``(N, C, kh, kw, OH, OW)`` strided view (NOTE [ Windows as strided
        views ])."""
        sN, sC, sH, sW = plane.strides
        shape = plane.shape[:2] + (self.kh, self.kw, self.OH, self.OW)
        strides = (sN, sC, self.dh * sH, self.dw * sW, self.sh * sH, self.sw * sW)
        return strided_view(xp, plane, shape, strides)


@lru_cache(maxsize=1024)
def geometry(shape, kernel, stride, padding, dilation, out_size=None):
    """The :class:`Geometry` of these sizes (tuples of ints), made once per distinct
    set (NOTE [ A convolution's fixed cost, cached per shape ] in
    ember/native/convolution/convolution.py)."""
    return Geometry(shape, kernel, stride, padding, dilation, out_size)


def strided_view(xp, a, shape, strides):
    """``as_strided(a, shape, strides)``, byte ``strides`` from ``a``'s first element.
    Over a C-contiguous NumPy array, an ndarray on its buffer is the same view for
    about an eighth of the cost (0.5 against 3.9 us: ``as_strided`` goes through an
    ``__array_interface__``), which counts in a small convolution."""
    if xp.__name__ == "numpy" and a.flags.c_contiguous:
        return xp.ndarray(shape, a.dtype, a, 0, strides)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


def window_count(size, kernel, stride, padding, dilation, ceil_mode=False):
    """How many windows fit along one dim (``ceil_mode``: a last partial window counts
    if it starts inside the input or its left padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if ceil_mode:
        count = -(-span // stride) + 1
        if (count - 1) * stride >= size + padding:
            count -= 1
        return count
    return span // stride + 1


def im2col_array(xp, x, geometry, fill=0):
    """``(N, C, H, W)`` -> ``(N, C*kh*kw, L)`` columns (a copy of the window view)."""
    cols = geometry.windows(xp, geometry.padded(xp, x, fill))
    return cols.reshape(x.shape[0], x.shape[1] * geometry.kh * geometry.kw, geometry.L)


def col2im_array(xp, cols, geometry):
    """The adjoint of :func:`im2col_array`: ``(N, C*kh*kw, L)`` -> ``(N, C, H, W)``,
    adding each tap's columns onto the pixels it read (kh*kw slice-adds). Columns
    that read padding are skipped, so no padded buffer is built and cropped."""
    g = geometry
    N = cols.shape[0]
    C = cols.shape[1] // (g.kh * g.kw)
    return col2im_taps(xp, cols.reshape(N, C, g.kh, g.kw, g.OH, g.OW), g)


def col2im_taps(xp, taps, geometry, out=None):
    """:func:`col2im_array` from a ``(N, C, kh, kw, OH, OW)`` array of any strides,
    added into ``out`` when given (else into zeros)."""
    g = geometry
    N, C = taps.shape[:2]
    cols = taps
    image = xp.zeros((N, C, g.H, g.W), dtype=cols.dtype) if out is None else out
    for i, j, rows, columns, out_rows, out_columns in tap_slices(g):
        pixels = image[:, :, rows, columns]
        xp.add(pixels, cols[:, :, i, j, out_rows, out_columns], out=pixels)  # in place, no write-back
    return image


def tap_slices(g):
    """``(i, j, image rows, image columns, output rows, output columns)`` of each tap
    ``(i, j)`` whose windows read inside the image: col2im's slice-adds, worked out once
    per set of sizes."""
    return _tap_slices(g.kh, g.kw, g.OH, g.OW, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw, g.H, g.W)


@lru_cache(maxsize=1024)
def _tap_slices(kh, kw, OH, OW, sh, sw, dh, dw, ph, pw, H, W):
    taps = []
    for i in range(kh):
        rows, out_rows = inside_slices(OH, sh, i * dh - ph, H)
        for j in range(kw):
            columns, out_columns = inside_slices(OW, sw, j * dw - pw, W)
            if out_rows.stop > out_rows.start and out_columns.stop > out_columns.start:
                taps.append((i, j, rows, columns, out_rows, out_columns))
    return tuple(taps)


def inside_slices(count, stride, offset, size):
    """(image slice, output slice) of the outputs ``o`` whose tap reads ``o*stride + offset``
    inside ``[0, size)``."""
    first = max(0, -(offset // stride)) if offset < 0 else 0
    last = min(count - 1, (size - 1 - offset) // stride)  # may be < first: nothing inside
    if last < first:
        return slice(0, 0), slice(0, 0)
    start = first * stride + offset
    return slice(start, start + (last - first) * stride + 1, stride), slice(first, last + 1)


# --- im2col and col2im of a few images, as ops a plugin may compile ----------------

# NOTE [ im2col and col2im as dispatch stubs ]
# A convolution that runs a few images at a time (ember/native/convolution/images.py)
# copies each chunk's windows into a column buffer and adds its column gradients back
# onto the images. In NumPy each is a copy or a slice-add per tap, where a compiled loop
# makes one pass with the padding folded in. So each is an op with its NumPy kernel as
# the generic one, as ATen declares a DispatchStub (DECLARE_DISPATCH) whose CPU kernel
# a compiled file registers (REGISTER_DISPATCH, aten/src/ATen/native/DispatchStub.h): a
# plugin registers a cpu kernel (ember-numba does, ember_numba/im2col.py), and the
# convolution looks the kernel up once per call, never per image (NOTE [ Dispatch
# stubs ] in ember/native/support/dispatch_stub.py).
# Every kernel gives the generic one's results bit for bit (the columns are copies, and
# col2im adds each pixel's taps in the same order).


def im2col_into(xp, images, out, geometry):
    """Write the columns of ``images`` ``(n, C, H, W)`` into ``out``, a C-contiguous
    ``(C*kh*kw, n*L)`` array: image ``m``'s windows are its columns ``m*L`` on."""
    g = geometry
    windows = g.windows(xp, g.padded(xp, images)).transpose(1, 2, 3, 0, 4, 5)
    out.reshape(images.shape[1], g.kh, g.kw, images.shape[0], g.OH, g.OW)[...] = windows


def col2im_add(xp, columns, images, geometry):
    """Add the C-contiguous ``(C*kh*kw, n*L)`` ``columns`` back onto ``images``
    ``(n, C, H, W)``, in place: the adjoint of :func:`im2col_into`."""
    g = geometry
    n, C = images.shape[:2]
    taps = columns.reshape(C, g.kh, g.kw, n, g.OH, g.OW).transpose(3, 0, 1, 2, 4, 5)
    col2im_taps(xp, taps, g, out=images)


IM2COL_INTO = Op("native::im2col_into", im2col_into)
COL2IM_ADD = Op("native::col2im_add", col2im_add)


# --- the public ops: F.unfold and F.fold ------------------------------------------


def _im2col_kernel(xp, x, kernel_size, dilation, padding, stride):
    batched = x.ndim == 4
    if not batched:
        x = x[None]
    g = Geometry(x.shape, kernel_size, stride, padding, dilation)
    cols = im2col_array(xp, x, g)
    return cols if batched else cols[0]


def _im2col_backward(ctx, grad):
    height, width = ctx.input_meta[0][0][-2:]
    return (COL2IM(grad, output_size=(height, width), **ctx.attrs),)


def _col2im_kernel(xp, cols, output_size, kernel_size, dilation, padding, stride):
    batched = cols.ndim == 3
    if not batched:
        cols = cols[None]
    channels = cols.shape[1] // (kernel_size[0] * kernel_size[1])
    g = Geometry((cols.shape[0], channels) + tuple(output_size), kernel_size, stride, padding, dilation)
    image = col2im_array(xp, cols, g)
    return image if batched else image[0]


def _col2im_backward(ctx, grad):
    attrs = dict(ctx.attrs)
    del attrs["output_size"]
    return (IM2COL(grad, **attrs),)


IM2COL = Op("aten::im2col", _im2col_kernel, _im2col_backward, promote=NONE)
COL2IM = Op("aten::col2im", _col2im_kernel, _col2im_backward, promote=NONE)


def _pair(value, name):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a pair, got {value}")
    return value


def _check_window_args(kernel_size, dilation, padding, stride):
    for name, value, low in (("kernel size", kernel_size, 1), ("dilation", dilation, 1),
                             ("padding", padding, 0), ("stride", stride, 1)):
        if min(value) < low:
            relation = "greater than zero" if low else "non-negative"
            raise RuntimeError(f"{name} should be {relation}, but got "
                               f"{name.split()[0]}_height: {value[0]} {name.split()[0]}_width: {value[1]}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks: ``(N, C, H, W)`` -> ``(N, C*kh*kw, L)``, where
    column ``l`` holds the window at output position ``l`` (im2col).

    >>> import ember
    >>> ember.nn.functional.unfold(ember.arange(16.).view(1, 1, 4, 4), 2, stride=2)[0, :, 0]
    tensor([0., 1., 4., 5.])
    """
    kernel_size, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    if input.ndim not in (3, 4) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    _check_window_args(kernel_size, dilation, padding, stride)
    height, width = input.shape[-2:]
    out_h = window_count(height, kernel_size[0], stride[0], padding[0], dilation[0])
    out_w = window_count(width, kernel_size[1], stride[1], padding[1], dilation[1])
    if out_h < 1 or out_w < 1:
        raise RuntimeError(f"Given input with spatial size ({height}, {width}), kernel_size={kernel_size}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding "
                           f"blocks as ({out_h}, {out_w}), but its components must be at least one.")
    return IM2COL(input, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into an image, summing overlaps:
    ``(N, C*kh*kw, L)`` -> ``(N, C, H, W)`` (col2im, the adjoint of :func:`unfold`).

    >>> import ember
    >>> ember.nn.functional.fold(ember.ones(1, 4, 9), (4, 4), 2).sum().item()
    36.0
    """
    output_size, kernel_size = _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size")
    dilation, padding, stride = _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride")
    if input.ndim not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    _check_window_args(kernel_size, dilation, padding, stride)
    taps = kernel_size[0] * kernel_size[1]
    if input.shape[-2] % taps:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={input.shape[-2]} and kernel_size={kernel_size}.")
    blocks = [window_count(output_size[d], kernel_size[d], stride[d], padding[d], dilation[d]) for d in (0, 1)]
    if blocks[0] * blocks[1] != input.shape[-1]:
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match "
                           f"the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={input.shape[-1]}.")
    return COL2IM(input, output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding,
                  stride=stride)
