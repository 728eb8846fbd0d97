"""Fractional max pooling: ``fractional_max_pool2d`` and ``fractional_max_pool3d``, max
pooling whose windows start at pseudo-random, overlapping steps chosen so that any
output size between 1 and ``input - kernel + 1`` comes out (Graham, "Fractional
Max-Pooling", 2015).

PyTorch counterpart: aten/src/ATen/native/FractionalMaxPool2d.cpp,
aten/src/ATen/native/FractionalMaxPool3d.cpp (with the shared checks and intervals of
FractionalMaxPooling.h) and torch/nn/functional.py (``fractional_max_pool2d``,
``fractional_max_pool3d``) (v2.13).
"""

import itertools
import math

from ember import dtypes
from ember.autograd.grad_mode import grad_state
from ember.dispatcher import NONE, Op

# NOTE [ Fractional pooling intervals ]
# Along a dimension of size ``n`` pooled by a window ``k`` into ``m`` outputs, one number
# ``u`` in [0, 1) per (sample, channel, dimension) places the windows. With
# ``alpha = (n - k) / (m - 1)`` the i-th window starts at
# ``int((i + u) * alpha) - int(u * alpha)`` for ``i < m - 1``, and the last one at
# ``n - k``, so the first window starts at 0, the last ends at the input's edge, and the
# steps between starts are ``floor(alpha)`` or ``ceil(alpha)``. PyTorch computes ``alpha``
# and the products in the input's dtype (float32 rounding can move a start by one), and so
# does the kernel below. The ``u`` come from ``_random_samples`` (``(N, C, 2)`` or
# ``(N, C, 3)``), else from ``rand`` in the input's dtype, from ember's generator, which
# draws PyTorch's stream: the same seed gives the same windows. In 2-D PyTorch reads the
# width's ``u`` first (``samples[..., 0]`` is W, ``[..., 1]`` is H); in 3-D the order is
# T, H, W.
#
# Each window's maximum is found as max pooling's (pooling3d.py): the first tap
# until a strictly greater value or a NaN comes; its flat index in the ``H*W`` (``T*H*W``)
# plane is returned, and the backward adds each gradient there (a ``scatter_add``).

# Which sample column places each spatial dimension, in dimension order (NOTE above).
_SAMPLE_COLUMN = {2: (1, 0), 3: (0, 1, 2)}


def _interval_starts(xp, u, size, out, kernel):
    """Where each of the ``out`` windows starts along a dimension of ``size``, for
    every ``u`` (shape (N, C)): int64 of shape (N, C, out).
    NOTE [ Fractional pooling intervals ]."""
    starts = xp.full(u.shape + (out,), size - kernel, dtype="int64")
    if out > 1:
        # in u's dtype, as PyTorch: float32 rounding can move a start by one
        alpha = xp.asarray(size - kernel, u.dtype) / xp.asarray(out - 1, u.dtype)
        steps = xp.arange(out - 1).astype(u.dtype)
        u = u[..., None]
        first = (u * alpha).astype("int64")
        starts[..., :-1] = ((steps + u) * alpha).astype("int64") - first
    return starts


def _fractional_max_pool_kernel(xp, x, samples, kernel_size, output_size):
    batch, channels, spatial = x.shape[0], x.shape[1], x.shape[2:]
    dims = len(spatial)
    starts = [_interval_starts(xp, samples[:batch, :, column], size, out, k)
              for column, size, out, k in zip(_SAMPLE_COLUMN[dims], spatial, output_size, kernel_size)]
    # each start array broadcast to (N, C, out_0, ..., out_{dims-1}), on its own axis
    starts = [s.reshape((batch, channels) + tuple(o if a == d else 1 for a, o in enumerate(output_size)))
              for d, s in enumerate(starts)]
    strides = [math.prod(spatial[d + 1:]) for d in range(dims)]
    planes = x.reshape(batch, channels, math.prod(spatial))
    out_shape = (batch, channels) + tuple(output_size)
    best = xp.full(out_shape, -xp.inf, dtype=x.dtype)
    indices = xp.broadcast_to(sum(s * stride for s, stride in zip(starts, strides)), out_shape).copy()
    for tap in itertools.product(*(range(k) for k in kernel_size)):
        flat = xp.broadcast_to(sum((s + t) * stride for s, t, stride in zip(starts, tap, strides)), out_shape)
        values = xp.take_along_axis(planes, flat.reshape(batch, channels, math.prod(output_size)), axis=-1)
        values = values.reshape(out_shape)
        wins = (values > best) | xp.isnan(values)
        best = xp.where(wins, values, best)
        indices = xp.where(wins, flat, indices)
    return best, indices


def _scatter_to_planes(grad, indices, shape):
    """Add ``grad`` into zeros of ``shape`` at the flat per-plane ``indices``."""
    from ember.native.factory import zeros

    volume = 1
    for size in shape[2:]:
        volume *= size
    planes = zeros(tuple(shape[:2]) + (volume,), dtype=grad.dtype, device=grad.device)
    return planes.scatter_add(-1, indices.flatten(2), grad.flatten(2)).view(tuple(shape))


def _fractional_max_pool_backward(ctx, grad, grad_indices):
    _, indices = ctx.saved_outputs
    return _scatter_to_planes(grad, indices, ctx.input_meta[0][0]), None


FRACTIONAL_MAX_POOL2D = Op("aten::fractional_max_pool2d", _fractional_max_pool_kernel,
                           _fractional_max_pool_backward, promote=NONE, save="outputs", num_outputs=2,
                           backward_name="FractionalMaxPool2DBackward0")
FRACTIONAL_MAX_POOL3D = Op("aten::fractional_max_pool3d", _fractional_max_pool_kernel,
                           _fractional_max_pool_backward, promote=NONE, save="outputs", num_outputs=2,
                           backward_name="FractionalMaxPool3DBackward0")


# --- the checks ----------------------------------------------------------------------


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_input(input, dims, name):
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}Expected {dims + 1}D or {dims + 2}D tensor, but got: {_sizes(input.shape)}")
    for d in range(1, input.ndim):
        if input.shape[d] <= 0:
            raise RuntimeError(f"{name}Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{_sizes(input.shape)} with dimension {d} being empty.")


def _check_windows(input, kernel_size, output_size, name):
    """Every window must fit: 2-D allows ``out + k - 1 <= n``, 3-D asks for ``<`` (as
    PyTorch), checking T, W, H in that order."""
    dims = len(kernel_size)
    labels = ("height", "width") if dims == 2 else ("time", "height", "width")
    order = (0, 1) if dims == 2 else (0, 2, 1)
    for d in order:
        k, out, size = kernel_size[d], output_size[d], input.shape[input.ndim - dims + d]
        fits = out + k - 1 <= size if dims == 2 else k <= size and out + k - 1 < size
        if not fits:
            raise RuntimeError(f"{name}pool {labels[d]} {k} too large relative to input {labels[d]} {size}")


def _check_not_differentiable(samples, name):
    if samples.requires_grad and grad_state.enabled:
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument 'random_samples'. "
                           "This input cannot have requires_grad True.")


def _check_samples(input, samples, dims):
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (1, input.shape[0]) if input.ndim == dims + 1 else input.shape[:2]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {samples.shape[2]}.")


# --- the functions -------------------------------------------------------------------


def _sizes_of(value, dims, name, what):
    sizes = (value,) * dims if isinstance(value, int) else tuple(value)
    if len(sizes) != dims:
        plural = "tuple of Ints" if dims == 2 else "tuple of three Ints"
        raise RuntimeError(f"fractional_max_pool{dims}d: {what} must either be a single Int or {plural}")
    return sizes


def _output_size(input, dims, output_size, output_ratio):
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{dims}d requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return output_size
    if dims == 2 and len(output_ratio) > 2:  # (PyTorch's 2-d form takes no bare number here: len() fails)
        raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
    ratio = (output_ratio,) * dims if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
    return [int(input.size(d - dims) * ratio[d]) for d in range(dims)]


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, samples, dims, op, name):
    from ember.native.factory import rand

    output_size = _output_size(input, dims, output_size, output_ratio)
    if samples is None:  # PyTorch's draw: one u per (sample, channel, dimension), in the input's dtype
        batch = 1 if input.ndim == dims + 1 else input.size(0)
        samples = rand(batch, input.size(-dims - 1), dims, dtype=input.dtype, device=input.device)
    _check_not_differentiable(samples, f"fractional_max_pool{dims}d")  # autograd's check, before the op's own
    kernel_size = _sizes_of(kernel_size, dims, name, "kernel_size")
    output_size = _sizes_of(output_size, dims, name, "output_size")
    _check_input(input, dims, name)
    _check_windows(input, kernel_size, output_size, name)
    _check_samples(input, samples, dims)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"fractional_max_pool{dims}d_out_frame\" not implemented for "
                                  f"'{dtypes.SCALAR_TYPE_NAMES[input.dtype.name]}'")
    unbatched = input.ndim == dims + 1
    batched = input.unsqueeze(0) if unbatched else input
    values, indices = op(batched, samples, kernel_size=kernel_size, output_size=output_size)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The maximum of ``kh x kw`` windows of ``(N, C, H, W)`` (or ``(C, H, W)``) placed at
    pseudo-random steps so that the output is ``output_size`` (or ``output_ratio`` times
    the input); with ``return_indices`` also each maximum's flat position in the ``H*W``
    plane. ``_random_samples`` (``(N, C, 2)`` in [0, 1)) fixes the steps (NOTE [ Fractional
    pooling intervals ]).

    >>> import ember
    >>> x = ember.arange(16.).view(1, 1, 4, 4)
    >>> ember.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=ember.zeros(1, 1, 2)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
                                FRACTIONAL_MAX_POOL2D, "fractional_max_pool2d(): ")


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """:func:`fractional_max_pool2d` over ``kt x kh x kw`` windows of ``(N, C, T, H, W)`` (or
    ``(C, T, H, W)``); ``_random_samples`` is ``(N, C, 3)``, indices are flat in ``T*H*W``.

    >>> import ember
    >>> x = ember.arange(27.).view(1, 1, 3, 3, 3)
    >>> ember.nn.functional.fractional_max_pool3d(x, 2, output_size=1, _random_samples=ember.zeros(1, 1, 3)).tolist()
    [[[[[26.0]]]]]
    """
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
                                FRACTIONAL_MAX_POOL3D, "fractional_max_pool3d_out(): ")
