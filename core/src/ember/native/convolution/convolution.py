"""Convolution: ``conv1d``, ``conv2d``, ``conv3d``, their transposed forms, one fused
``aten::convolution`` op and its ``aten::convolution_backward``.

PyTorch counterpart: aten/src/ATen/native/Convolution.cpp (``_convolution``; its shape
checks are in ember/native/convolution/arguments.py), NaiveConvolutionTranspose2d.cpp,
derivatives.yaml (``convolution_backward``, ``_convolution_double_backward``) and
torch/nn/functional.py (conv*d) (v2.13).

This file is the reference: im2col + one matrix product per group for the output
(NOTE [ Windows as strided views ] in ember/native/fold.py, NOTE [ One product per
group ] below), the transposed product and col2im for the input's gradient, the output
gradient against the same columns for the weight's, and the double backward built from
those two adjoints (NOTE [ Convolution as a bilinear map ]). A 1-D convolution runs as
a 2-D one over images of height 1; a 3-D one by the same three products over volumes
(ember/native/convolution/volumes.py); a transposed convolution is the input adjoint of the
convolution it transposes. Each product goes through one seam, ``_product``, where
``algorithm.choose`` may pick a faster kernel for the shape: a fixed rule, the same in
every process, among kernels that sum the same C*kh*kw terms per output by BLAS as
this one does (channels_last window rows, 1x1 per image, a few images at a time, the
strided input adjoint by phases); Winograd only where asked (NOTE [ Choosing a
convolution algorithm ] in ember/native/convolution/algorithm.py). In NCHW with
``ember.backends.mkldnn.enabled = False`` the kernels below run every product.

# NOTE [ Convolution as a bilinear map ]
# Write the op without bias as F(x, W) (a convolution, or a transposed one). It is
# linear in each argument, so its backward needs only two adjoints:
#   grad_input  = F(., W)^T g   (col2im(W^T g); transposed: a convolution of g)
#   grad_weight = F(x, .)^T g   (im2col(x) against g, summed over the batch)
# ``aten::convolution_backward`` computes both (and grad_bias = sum(g)) in one kernel.
# Being bilinear too, its own backward is made of the same two ops, given the
# gradients (ggI, ggW, ggB) of its outputs:
#   d g = F(ggI, W) + F(x, ggW) + ggB      d x = F(., ggW)^T g      d W = F(ggI, .)^T g
# so double (and higher) backward of a convolution comes for free.

# NOTE [ A convolution's fixed cost, cached per shape ]
# A tiny convolution (1x4x8x8, 4->4, 3x3) is a few thousand multiplies, and the rest
# of its call was once most of it: 73 us against torch's 14 (one thread, load 3), of
# which the products and copies were about 10. Most of the rest depended only on
# shapes, strides and the size arguments, and a network calls each layer with the
# same ones every step. So each such piece is worked out once per distinct set, with
# functools.lru_cache on plain tuples: the argument checks (convolution_arguments.py:
# a set that passed passes again, a failing one is never cached and raises PyTorch's
# message each time), which layout each array's strides suggest (memory_format.py),
# the Geometry (fold.geometry: one shared, never-changed object per set of sizes) and
# col2im's per-tap slices (fold.tap_slices). What can change between two calls of the
# same shapes is read on every call: grad mode, autocast (part of the checks' key),
# ``ember.backends.mkldnn.enabled``, BLAS's thread count. Besides the caches, three
# cheaper array calls: the windows' strided view as an ndarray over the padded
# buffer (as_strided cost 3.9 us of it), zeros for the padded plane (full: 1.5 us
# against 0.45) and no padded copy at all for an unpadded convolution. The arrays
# and their arithmetic are the same, so every result is the same to the bit (checked
# against the uncached path: 12,432 outputs and gradients, float32 and float64).
# bench/conv_small.py (CPU time, interleaved with torch, load 4): that forward went
# from 4.8x torch's time to 2.5x (channels_last 3.2x to 2.1x), forward+backward from
# 2.2x to 1.45x (with a cheaper sum backward, ember/native/reduction/reduction.py).
"""

from ember.autograd.forward_grad import bilinear_plus_bias
from ember.autograd.grad_mode import grad_state
from ember.dispatcher import NONE, Op
from ember.memory_format import array_suggests_channels_last
from ember.native.convolution import algorithm as algorithms
from ember.native.convolution import columns as kept_columns
from ember.native.convolution import empty as empty_input
from ember.native.convolution import images, volumes
from ember.native.convolution.arguments import check_convolution, expand, shape_str, transposed_shape
from ember.native.fold import col2im_taps, geometry
from ember.native.padding import pad as _pad
from ember.native.support import blas_sums

# --- kernels -----------------------------------------------------------------------


def _lift(arrays, attrs):
    """Run 1-D as 2-D: insert a height-1 axis in the arrays, a leading 1 (or 0) in attrs."""
    arrays = [a if a is None or a.ndim < 3 else a[:, :, None] for a in arrays]
    lifted = dict(attrs)
    for name, value in attrs.items():
        if isinstance(value, tuple) and len(value) == 1:
            lifted[name] = ((0,) if name in ("padding", "output_padding") else (1,)) + value
    return arrays, lifted


def _geometry(image_shape, weight_shape, stride, padding, dilation, out_size=None):
    return geometry(tuple(image_shape), tuple(weight_shape[2:]), tuple(stride), tuple(padding), tuple(dilation),
                    None if out_size is None else tuple(out_size))


def _grouped(weight, groups):
    """``(O, C/g, kh, kw)`` -> ``(g, O/g, C/g*kh*kw)``: one matrix per group."""
    taps = weight.shape[1] * weight.shape[2] * weight.shape[3]
    return weight.reshape(groups, weight.shape[0] // groups, taps)


def _columns(xp, x, g, groups):
    """im2col of the whole batch, ``(groups, C/g*kh*kw, N*L)``: every window of every
    image is one column, so each group's convolution is ONE matrix product."""
    # unpadded: the windows of x itself, no padded copy
    plane = x if g.Hp == g.H and g.Wp == g.W else g.padded(xp, x)
    windows = g.windows(xp, plane).transpose(1, 2, 3, 0, 4, 5)  # (C, kh, kw, N, OH, OW)
    per_group = x.shape[1] // groups * g.kh * g.kw
    return windows.reshape(groups, per_group, x.shape[0] * g.L)


def _channel_major(image, groups):
    """``(N, C, H, W)`` -> ``(groups, C/g, N*H*W)``: the layout of a product's result."""
    N, C, H, W = image.shape
    return image.transpose(1, 0, 2, 3).reshape(groups, C // groups, N * H * W)


def _image(xp, channel_major, N, geometry):
    """``(groups, C/g, N*OH*OW)`` -> a C-contiguous ``(N, C, OH, OW)``."""
    C = channel_major.shape[0] * channel_major.shape[1]
    y = channel_major.reshape(C, N, geometry.OH, geometry.OW).transpose(1, 0, 2, 3)
    return _c_contiguous(xp, y)


def _forward(xp, x, weight, geometry, groups):
    """F(x, W) for a convolution: ``(N, C, H, W)`` -> ``(groups, O/g, N*L)``; offers
    its columns to a capture (NOTE [ The forward's columns, kept for the weight's
    gradient ])."""
    columns = _offered_columns(xp, x, geometry, groups)
    return xp.matmul(_grouped(weight, groups), columns)


def _offered_columns(xp, x, geometry, groups):
    """:func:`_columns`, offered to a capture (NOTE [ The forward's columns, kept for the
    weight's gradient ])."""
    columns = _columns(xp, x, geometry, groups)
    kept_columns.offer(columns, "columns")
    return columns


def _input_adjoint(xp, rows, weight, N, geometry, groups):
    """F(., W)^T for a convolution: ``(groups, O/g, N*L)`` -> the ``(N, C, H, W)``
    image, a few images at a time (NOTE [ col2im a few images at a time ] in
    ember/native/convolution/images.py)."""
    # BLAS likes a contiguous left side
    w_t = xp.ascontiguousarray(_grouped(weight, groups).transpose(0, 2, 1))
    g = geometry
    channels = weight.shape[1] * groups
    image = xp.zeros((N, channels, g.H, g.W), dtype=rows.dtype)
    K = w_t.shape[1]  # C/g*kh*kw
    per_chunk = max(1, min(N, images.images_per_chunk(N, groups * K * g.L)))
    buffer = xp.empty(groups * K * per_chunk * g.L, dtype=rows.dtype)
    for start in range(0, N, per_chunk):
        n = min(N, start + per_chunk) - start
        cols = buffer[:groups * K * n * g.L].reshape(groups, K, n * g.L)
        xp.matmul(w_t, rows[:, :, start * g.L:(start + n) * g.L], out=cols)
        taps = cols.reshape(channels, g.kh, g.kw, n, g.OH, g.OW)
        col2im_taps(xp, taps.transpose(3, 0, 1, 2, 4, 5), g, out=image[start:start + n])
    return image




def _weight_adjoint(xp, x, rows, weight_shape, geometry, groups):
    """F(x, .)^T for a convolution: the ``(groups, O/g, N*L)`` rows against im2col(x),
    the forward's columns where they were kept."""
    cols = _kept_or_built_columns(xp, x, geometry, groups)
    return xp.matmul(rows, cols.transpose(0, 2, 1)).reshape(weight_shape)


def _kept_or_built_columns(xp, x, g, groups):
    """The forward's columns of ``x`` where they were kept, else built again."""
    K = x.shape[1] // groups * g.kh * g.kw
    cols = kept_columns.take("columns", (groups, K, x.shape[0] * g.L), x.dtype)
    return _columns(xp, x, g, groups) if cols is None else cols


# NOTE [ One product per group ]
# Laying the columns of the whole batch side by side, (C*kh*kw, N*L), makes a
# convolution one large matrix product instead of N per-image ones. Single-threaded
# they cost about the same, but a batched matmul calls BLAS N times, and each call
# wakes and joins BLAS's threads: on a loaded machine that was measured 20x slower
# (1.5 s against 80 ms for the 32->64 layer with 2 threads). The price is one
# transposing copy of the output (N, O, L), small beside the columns.


def _add_bias(y, bias):
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


def _c_contiguous(xp, y):
    # reshaped from flat: torch's strides on size-1 dims too (ascontiguousarray keeps a
    # batch of one's transposed stride, since such an array already counts as contiguous)
    return xp.ascontiguousarray(y).reshape(-1).reshape(y.shape)


class _Rows:
    """The output gradient of a backward and, made on first use and then kept, its
    ``(groups, O/g, N*L)`` channel-major copy: the reference input and weight adjoints
    both read it, and the transposing copy costs about 1 ms on a 32x64x16x16 gradient."""

    __slots__ = ("grad", "groups", "_channel_major")

    def __init__(self, grad, groups):
        self.grad, self.groups, self._channel_major = grad, groups, None

    @property
    def shape(self):
        return self.grad.shape

    @property
    def dtype(self):
        return self.grad.dtype

    def channel_major(self):
        if self._channel_major is None:
            self._channel_major = _channel_major(self.grad, self.groups)
        return self._channel_major


# --- the reference kernel of each product, as algorithm.choose calls them: (xp,
# operands, weight, g, groups) with operands (x, bias), the output gradient's _Rows, or
# (x, rows) -------------------------------------------------------------------------


def reference_forward(xp, operands, weight, g, groups):
    """F(x, W) + bias by im2col and one product per group: a C-contiguous ``(N, O, OH, OW)``."""
    x, bias = operands
    return _add_bias(_image(xp, _forward(xp, x, weight, g, groups), x.shape[0], g), bias)


def reference_input_adjoint(xp, rows, weight, g, groups):
    """F(., W)^T grad by the transposed product and col2im: the ``(N, C, H, W)`` image."""
    return _input_adjoint(xp, rows.channel_major(), weight, g.N, g, groups)


def reference_weight_adjoint(xp, operands, weight, g, groups):
    """F(x, .)^T grad: the output gradient's rows against im2col(x)."""
    x, rows = operands
    return _weight_adjoint(xp, x, rows.channel_major(), weight.shape, g, groups)


REFERENCE = {"forward": reference_forward, "input_adjoint": reference_input_adjoint,
             "weight_adjoint": reference_weight_adjoint}


def _product(role, xp, operands, weight, g, groups, channels_last, transposed=False):
    """One of a convolution's three products (``role``), by the kernel
    ``algorithm.choose`` picks for this shape: the reference above unless a faster one
    applies (NOTE [ Choosing a convolution algorithm ] in
    ember/native/convolution/algorithm.py)."""
    kernel = algorithms.choose(role, REFERENCE, xp, operands, weight, g, groups,
                               channels_last, transposed)
    return kernel(xp, operands, weight, g, groups)


# --- the op's kernels ----------------------------------------------------------------


def _convolution_kernel(xp, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if empty_input.is_empty_convolution(x):  # NOTE [ A convolution with nothing to convolve ]
        return empty_input.empty_forward(xp, x, weight, stride, padding, dilation, transposed, output_padding,
                                         groups)
    if x.ndim == 5:
        return _volume_convolution(xp, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    channels_last = _use_channels_last(x, weight)
    squeeze = x.ndim == 3
    if squeeze:
        (x, weight), attrs = _lift([x, weight], dict(stride=stride, padding=padding, dilation=dilation,
                                                       output_padding=output_padding))
        stride, padding, dilation, output_padding = (attrs[k] for k in ("stride", "padding", "dilation",
                                                                         "output_padding"))
    if not transposed:
        g = _geometry(x.shape, weight.shape, stride, padding, dilation)
        y = _product("forward", xp, (x, bias), weight, g, groups, channels_last)
    else:  # the input adjoint of the convolution whose output has x's shape
        out_shape = transposed_shape(x.shape, weight.shape, stride, padding, dilation, output_padding, groups)
        g = _geometry(out_shape, weight.shape, stride, padding, dilation, out_size=x.shape[2:])
        y = _add_bias(_product("input_adjoint", xp, _Rows(x, groups), weight, g, groups, channels_last, True), bias)
    return y[:, :, 0] if squeeze else y


def _use_channels_last(x, weight):
    """PyTorch's CPU rule: a 2-D convolution is channels_last (its output and both
    gradients) when the input or the weight suggests that format (1-D never is)."""
    return x.ndim == 4 and (array_suggests_channels_last(x) or array_suggests_channels_last(weight))


def _convolution_backward_kernel(xp, grad, x, weight, stride, padding, dilation, transposed, output_padding,
                                 groups, output_mask):
    if empty_input.is_empty_convolution(x):  # NOTE [ A convolution with nothing to convolve ]
        return empty_input.empty_backward(xp, grad, x, weight, transposed, groups, output_mask)
    if x.ndim == 5:
        return _volume_convolution_backward(xp, grad, x, weight, stride, padding, dilation, transposed, groups,
                                            output_mask)
    channels_last = _use_channels_last(x, weight)
    squeeze = x.ndim == 3
    if squeeze:
        (grad, x, weight), attrs = _lift([grad, x, weight], dict(stride=stride, padding=padding,
                                                                 dilation=dilation))
        stride, padding, dilation = attrs["stride"], attrs["padding"], attrs["dilation"]
    grad_input = grad_weight = None
    if not transposed:
        g = _geometry(x.shape, weight.shape, stride, padding, dilation)
        rows = _Rows(grad, groups)  # the reference's two adjoints share one channel-major copy of grad
        if output_mask[0]:
            grad_input = _product("input_adjoint", xp, rows, weight, g, groups, channels_last)
        if output_mask[1]:
            grad_weight = _product("weight_adjoint", xp, (x, rows), weight, g, groups, channels_last)
    else:  # the roles swap: the "image" of the windows is the output gradient
        g = _geometry(grad.shape, weight.shape, stride, padding, dilation, out_size=x.shape[2:])
        if output_mask[0]:
            grad_input = _product("forward", xp, (grad, None), weight, g, groups, channels_last, True)
        if output_mask[1]:
            grad_weight = _product("weight_adjoint", xp, (grad, _Rows(x, groups)), weight, g, groups,
                                   channels_last, True)
    empty = xp.empty((0,), dtype=grad.dtype)
    grad_input = empty if grad_input is None else grad_input
    grad_weight = empty if grad_weight is None else grad_weight
    grad_bias = empty
    if output_mask[2]:
        grad_bias = _bias_gradient(xp, grad)
    if squeeze:
        grad_input = grad_input[:, :, 0] if grad_input.ndim == 4 else grad_input
        grad_weight = grad_weight[:, :, 0] if grad_weight.ndim == 4 else grad_weight
    return grad_input, grad_weight, grad_bias


def _volume_convolution(xp, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A 3-D convolution (or transposed one) by vol2col, ember/native/convolution/volumes.py."""
    if not transposed:
        g = volumes.volume_geometry(x.shape, weight.shape[2:], stride, padding, dilation)
        return volumes.forward(xp, x, weight, bias, g, groups)
    out_shape = transposed_shape(x.shape, weight.shape, stride, padding, dilation, output_padding, groups)
    g = volumes.volume_geometry(out_shape, weight.shape[2:], stride, padding, dilation, x.shape[2:])
    return _add_bias(volumes.input_adjoint(xp, x, weight, g, groups), bias)


def _volume_convolution_backward(xp, grad, x, weight, stride, padding, dilation, transposed, groups, output_mask):
    """The gradients of a 3-D convolution: the same two adjoints, by vol2col; a transposed
    convolution's roles swap as in 2-D (the output gradient is the image its windows cover)."""
    image, rows = (grad, x) if transposed else (x, grad)
    g = volumes.volume_geometry(image.shape, weight.shape[2:], stride, padding, dilation, rows.shape[2:])
    empty = xp.empty((0,), dtype=grad.dtype)
    grad_input = grad_weight = grad_bias = empty
    if output_mask[0]:
        grad_input = (volumes.forward(xp, grad, weight, None, g, groups) if transposed
                      else volumes.input_adjoint(xp, grad, weight, g, groups))
    if output_mask[1]:
        grad_weight = volumes.weight_adjoint(xp, image, rows, weight.shape, g, groups)
    if output_mask[2]:
        grad_bias = volumes.bias_gradient(grad)
    return grad_input, grad_weight, grad_bias


def _bias_gradient(xp, grad):
    """``grad.sum(axis=(0, 2, 3))``: per image by a BLAS matrix-vector product where
    ``grad`` is laid out whole (NCHW or channels_last), then over the batch (NOTE [ Norm
    reductions as matrix-vector products ] in ember/native/support/blas_sums.py; each product
    sums one image's plane, a row no longer than NumPy's pairwise sums handle alike).
    Measured on a (32, 64, 32, 32) float32 gradient, one thread: 0.42 ms against 0.78
    (NCHW), 0.51 against 0.99 (channels_last)."""
    N, O, H, W = grad.shape
    if not blas_sums.blas_dtype(xp, grad) or grad.size == 0:
        return grad.sum(axis=(0, 2, 3))
    if grad.flags.c_contiguous:
        return blas_sums.row_sums(xp, grad.reshape(N * O, H * W)).reshape(N, O).sum(axis=0)
    pixels = grad.transpose(0, 2, 3, 1)
    if pixels.flags.c_contiguous:
        ones = xp.ones(H * W, dtype=grad.dtype)
        return xp.matmul(ones, pixels.reshape(N, H * W, O)).sum(axis=0)
    return grad.sum(axis=(0, 2, 3))


# --- autograd formulas (NOTE [ Convolution as a bilinear map ]) ---------------------


def _convolution_backward(ctx, grad):
    x, weight, bias = ctx.saved_inputs
    needs = ctx.needs_input_grad
    mask = (needs[0], needs[1], bias is not None and needs[2])
    with kept_columns.handing_over(ctx):
        return convolution_backward(grad, x, weight, output_mask=mask, **ctx.attrs)


def _convolution_double_backward(ctx, gg_input, gg_weight, gg_bias):
    grad, x, weight = ctx.saved_inputs
    attrs = {k: v for k, v in ctx.attrs.items() if k != "output_mask"}
    needs = ctx.needs_input_grad
    d_grad = d_x = d_weight = None
    if needs[0]:
        terms = []
        if gg_input is not None:
            terms.append(CONVOLUTION(gg_input, weight, gg_bias, **attrs))
        elif gg_bias is not None:
            per_channel = gg_bias.reshape((1, -1) + (1,) * (grad.ndim - 2))
            terms.append(per_channel.expand(grad.shape))
        if gg_weight is not None:
            terms.append(CONVOLUTION(x, gg_weight, None, **attrs))
        for term in terms:
            d_grad = term if d_grad is None else d_grad + term
    if needs[1] and gg_weight is not None:
        input_only = (True, False, False)
        d_x = convolution_backward(grad, x, gg_weight, input_only, **attrs)[0]
    if needs[2] and gg_input is not None:
        weight_only = (False, True, False)
        d_weight = convolution_backward(grad, gg_input, weight, weight_only, **attrs)[1]
    return d_grad, d_x, d_weight


CONVOLUTION = Op("aten::convolution", _convolution_kernel, _convolution_backward, promote=NONE, save="inputs",
                 jvp=bilinear_plus_bias(2))
CONVOLUTION_BACKWARD = Op("aten::convolution_backward", _convolution_backward_kernel,
                          _convolution_double_backward, promote=NONE, save="inputs", num_outputs=3)


def convolution_backward(grad, input, weight, output_mask, **attrs):
    """``(grad_input, grad_weight, grad_bias)`` of :func:`convolution`; None where
    ``output_mask`` says the gradient is not wanted."""
    outs = CONVOLUTION_BACKWARD(grad, input, weight, output_mask=tuple(output_mask), **attrs)
    return tuple(o if wanted else None for o, wanted in zip(outs, output_mask))


# --- public functions --------------------------------------------------------------


def convolution(input, weight, bias=None, stride=1, padding=0, dilation=1, transposed=False, output_padding=0,
                groups=1):
    """The convolution every ``conv*`` function calls: checks the arguments like
    PyTorch, then runs the fused ``aten::convolution`` op on a batched input."""
    dims = weight.ndim - 2
    stride, padding = expand(stride, dims, "stride"), expand(padding, dims, "padding")
    dilation, output_padding = expand(dilation, dims, "dilation"), expand(output_padding, dims, "output_padding")
    check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    attrs = dict(stride=stride, padding=padding, dilation=dilation, transposed=bool(transposed),
                 output_padding=output_padding, groups=groups)
    if transposed or not (weight._requires_grad and grad_state.enabled):
        return CONVOLUTION(input, weight, bias, **attrs)
    # the weight's gradient will want the forward's columns (NOTE [ The forward's
    # columns, kept for the weight's gradient ] in ember/native/convolution/columns.py)
    kept_columns.capture()
    out = None
    try:
        out = CONVOLUTION(input, weight, bias, **attrs)
    finally:
        kept_columns.keep(None if out is None else out._grad_fn)
    return out


def _batched(input, dims, name):
    if input.ndim == dims + 2:
        return input, False
    if input.ndim == dims + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got input "
                       f"of size: {shape_str(input.shape)}")


def _same_padding(input, weight, stride, dilation, dims):
    """Padding for ``padding='same'``: the total ``d*(k-1)`` split evenly, any odd one
    extra on the right (done by an explicit pad, as PyTorch does)."""
    if any(s != 1 for s in expand(stride, dims, "stride")):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = expand(dilation, dims, "dilation")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    padding = tuple(t // 2 for t in totals)
    extra = [t % 2 for t in totals]
    if any(extra):
        pads = []
        for e in reversed(extra):  # F.pad lists the last dim first
            pads += [0, e]
        input = _pad(input, pads)
    return input, padding


def _as_listed(value, dims):
    """An int size argument as the ``dims`` values torch's binding makes of it (``IntArrayRef[3]``
    takes 1 as [1, 1, 1]), so a weight of the wrong rank fails torch's check of that list."""
    return (value,) * dims if isinstance(value, int) else value


def _conv(input, weight, bias, stride, padding, dilation, groups, dims, name):
    input, unbatched = _batched(input, dims, name)
    stride, dilation = _as_listed(stride, dims), _as_listed(dilation, dims)
    padding = _as_listed(padding, dims)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            input, padding = _same_padding(input, weight, stride, dilation, dims)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as in PyTorch) of ``(N, C, L)`` with
    ``(O, C/groups, k)``; ``padding`` may be an int, a tuple, ``'valid'`` or ``'same'``.

    >>> import ember
    >>> ember.nn.functional.conv1d(ember.ones(1, 1, 4), ember.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution: ``out[n, o] = bias[o] + sum_c,i,j weight[o, c, i, j] *
    input[n, c, s*h + d*i - p, s*w + d*j - p]`` (per group).

    >>> import ember
    >>> ember.nn.functional.conv2d(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, dims, name):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    input, unbatched = _batched(input, dims, name)
    if input.numel() == 0 and input.shape[0] and input.shape[1]:  # an empty image, not an empty batch
        shape = list(input.shape)
        if dims == 1:  # PyTorch runs a 1-d convolution as a 2-d one of height 1
            shape.insert(2, 1)
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: {shape}")
    stride, padding, dilation = _as_listed(stride, dims), _as_listed(padding, dims), _as_listed(dilation, dims)
    output_padding = _as_listed(output_padding, dims)
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out.squeeze(0) if unbatched else out


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of ``(N, C, D, H, W)`` volumes with ``(O, C/groups, kd, kh, kw)``
    (by vol2col, ember/native/convolution/volumes.py); ``padding`` as :func:`conv1d`'s.

    >>> import ember
    >>> ember.nn.functional.conv3d(ember.ones(1, 1, 2, 2, 2), ember.ones(1, 1, 2, 2, 2)).tolist()
    [[[[[8.0]]]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution: the adjoint of :func:`conv1d` with the same weight
    ``(C_in, C_out/groups, k)``; output length ``(L-1)*s - 2p + d*(k-1) + output_padding + 1``."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution"): the gradient of :func:`conv2d`
    with respect to its input, with weight ``(C_in, C_out/groups, kh, kw)``.

    >>> import ember
    >>> ember.nn.functional.conv_transpose2d(ember.ones(1, 1, 2, 2), ember.ones(1, 1, 2, 2)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution: the gradient of :func:`conv3d` with respect to its
    input, with weight ``(C_in, C_out/groups, kd, kh, kw)``."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")

