"""``F.interpolate``: resize the spatial dims by nearest, nearest-exact, (bi/tri)linear,
bicubic or area interpolation.

PyTorch counterpart: torch/nn/functional.py (``interpolate``),
aten/src/ATen/native/UpSample.h (source-index formulas, the cubic convolution),
UpSampleNearest*.cpp, UpSampleBilinear2d.cpp, UpSampleBicubic2d.cpp and
UpSampleLinear1d.cpp (v2.13).

Each mode is separable: along each spatial dim an output position reads one input
position (nearest), two with weights ``1 - t`` and ``t`` (linear) or four with the
cubic convolution's weights (bicubic): one ``resample``
op per dim (ember/native/resampling.py), whose backward and double backward are its
adjoint pair. The positions are computed
in the input's precision with PyTorch's formulas, so ties fall the same way; float16
and bfloat16 are interpolated in float32 and rounded once (their opmath).
"""

import math

import numpy as np

from ember.native.resampling import resample
from ember.opmath import is_reduced

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _scale(in_size, out_size, scale_factor, align_corners, dtype):
    """Input pixels per output pixel (PyTorch's ``area_pixel_compute_scale``)."""
    if align_corners:
        return dtype.type((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype.type(0)
    if scale_factor is not None and scale_factor > 0:
        return dtype.type(1.0 / scale_factor)
    return dtype.type(in_size) / dtype.type(out_size)


def nearest_positions(in_size, out_size, scale_factor, exact=False):
    """The input position each output position copies (``floor(dst * scale)``,
    or ``floor((dst + 0.5) * scale)`` for nearest-exact), in float32 as PyTorch."""
    scale = _scale(in_size, out_size, scale_factor, False, np.dtype(np.float32))
    dst = np.arange(out_size)
    if exact:
        source = np.floor(((dst + 0.5) * np.float64(scale)).astype(np.float32))
    else:
        if out_size == in_size:
            return dst
        source = np.floor(dst.astype(np.float32) * scale)
    return np.minimum(source.astype(np.int64), in_size - 1)


def linear_positions(in_size, out_size, scale_factor, align_corners, dtype):
    """``(left, right, weight_right)``: each output blends input ``left`` and ``right``."""
    scale = _scale(in_size, out_size, scale_factor, align_corners, dtype)
    dst = np.arange(out_size).astype(dtype)
    if align_corners:
        source = scale * dst
    else:
        source = np.maximum(scale * (dst + dtype.type(0.5)) - dtype.type(0.5), dtype.type(0))
    left = np.floor(source).astype(np.int64)
    left = np.minimum(left, in_size - 1)
    right = np.minimum(left + 1, in_size - 1)
    return left, right, (source - left).astype(dtype)


CUBIC_A = -0.75  # the cubic convolution's free parameter, as torch (and OpenCV) choose it


def _cubic_near(x):
    """Keys' cubic convolution weight for a tap at distance ``x <= 1``."""
    return ((CUBIC_A + 2) * x - (CUBIC_A + 3)) * x * x + 1


def _cubic_far(x):
    """Keys' cubic convolution weight for a tap at distance ``1 < x < 2``."""
    return ((CUBIC_A * x - 5 * CUBIC_A) * x + 8 * CUBIC_A) * x - 4 * CUBIC_A


def cubic_taps(in_size, out_size, scale_factor, align_corners, dtype):
    """The four ``(index, weight)`` taps of bicubic interpolation along one dim: the inputs
    at ``floor(source) - 1 .. floor(source) + 2`` (clamped to the edges), the source
    position not clamped at 0 as the linear modes' is."""
    scale = _scale(in_size, out_size, scale_factor, align_corners, dtype)
    dst = np.arange(out_size).astype(dtype)
    source = scale * dst if align_corners else scale * (dst + dtype.type(0.5)) - dtype.type(0.5)
    start = np.floor(source)
    t = (source - start).astype(dtype)
    weights = (_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t))
    start = start.astype(np.int64)
    return [(np.clip(start + offset, 0, in_size - 1), weight.astype(dtype))
            for offset, weight in zip((-1, 0, 1, 2), weights)]


def _triangle(x):
    """The bilinear filter: 1 - |x| within one pixel."""
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def _keys_cubic(x, a=-0.5):
    """The bicubic filter of antialiased resizing (Keys' cubic with a = -0.5, as PIL and torch)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def antialias_taps(in_size, out_size, scale_factor, align_corners, dtype, mode):
    """The taps of antialiased bilinear or bicubic resizing along one dim (PIL's filter,
    torch's ``_upsample_*_aa``): when shrinking by ``scale > 1`` the filter is stretched
    ``scale`` times, so each output averages every input pixel under it; the weights of
    each output are normalised to sum to 1. Tap ``k`` of output ``i`` reads input
    ``start_i + k`` (weight 0 past the filter's reach)."""
    interp_size, filter_fn = (2, _triangle) if mode == "bilinear" else (4, _keys_cubic)
    scale = float(_scale(in_size, out_size, scale_factor, align_corners, dtype))
    support = interp_size / 2 * scale if scale >= 1 else interp_size / 2
    invscale = 1 / scale if scale >= 1 else 1.0
    centre = scale * (np.arange(out_size) + 0.5)
    start = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    stop = np.minimum((centre + support + 0.5).astype(np.int64), in_size)
    width = int(np.ceil(support)) * 2 + 1
    offsets = np.arange(width)
    weights = filter_fn((start[:, None] + offsets - centre[:, None] + 0.5) * invscale)
    weights = np.where(start[:, None] + offsets < stop[:, None], weights, 0)
    total = weights.sum(1, keepdims=True)
    weights = np.where(total != 0, weights / np.where(total != 0, total, 1), 0)
    return [(np.minimum(start + k, in_size - 1), weights[:, k].astype(dtype)) for k in range(width)]


def _output_sizes(input, size, scale_factor, dims, recompute_scale_factor):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * dims if isinstance(size, int) else tuple(size)
        if len(sizes) != dims:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and output size of {sizes}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * dims
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = (scale_factor,) * dims if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
    if len(scales) != dims:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                         f"{scales}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                         "scale_factor in (s1, s2, ...,sK) format.")
    sizes = tuple(math.floor(float(input.shape[2 + d]) * scales[d]) for d in range(dims))
    return sizes, (None,) * dims if recompute_scale_factor else tuple(float(s) for s in scales)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of ``(N, C, ...)`` to ``size`` or by ``scale_factor``.

    Modes: ``'nearest'`` (PyTorch's legacy ``floor(dst * scale)``), ``'nearest-exact'``
    (pixel centres), ``'linear'`` (3-D input), ``'bilinear'`` and ``'bicubic'`` (4-D input),
    ``'trilinear'`` (5-D input), ``'area'`` (adaptive average pooling).
    ``align_corners=True`` maps the corner pixels of input and output onto each other;
    ``False`` (default) maps pixel areas.

    >>> import ember
    >>> ember.nn.functional.interpolate(ember.tensor([[[1., 2.]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    if mode not in _MODES or mode == "bicubic" and input.ndim != 4:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    dims = input.ndim - 2
    if dims not in (1, 2, 3):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if mode in _DIMS and _DIMS[mode] != dims:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_DIMS[mode] + 2}D input")
    sizes, scales = _output_sizes(input, size, scale_factor, dims, recompute_scale_factor)
    if not input.dtype.is_floating_point and mode != "area":
        from ember.native.support._inplace import _type_name

        if mode == "bicubic":
            raise NotImplementedError(f"\"compute_indices_weights_cubic\" not implemented for "
                                      f"'{_type_name(input.dtype)}'")
        kind = "nearest" if mode.startswith("nearest") else {1: "linear", 2: "bilinear", 3: "trilinear"}[dims]
        raise NotImplementedError(f"\"upsample_{kind}{dims}d\" not implemented for '{_type_name(input.dtype)}'")
    if mode == "area":
        from ember.native.pooling.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dims - 1](input, sizes)
    return _resample_dims(input, sizes, scales, mode, align_corners, antialias)


def _resample_dims(input, sizes, scales, mode, align_corners, antialias):
    """Resize each spatial dim of ``input`` to ``sizes`` (``scales``, where not None, set
    the source positions as a ``scale_factor`` does)."""
    dims = input.ndim - 2
    if min(sizes) <= 0 or min(input.shape[2:]) <= 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, input.shape[2:]))}) and output ({', '.join(map(str, sizes))})")
    from ember.memory_format import channels_last, suggest_memory_format

    # NOTE [ Resampling channels_last maps as NHWC ]
    # PyTorch keeps the input's format. A channels_last map is resampled through its
    # (N, H, W, C) view: each ``take`` then copies runs of W * C and C contiguous values
    # and writes NHWC, which the final permute shows as channels_last, with no copy.
    # Taking along NCHW dims instead wrote NCHW and needed a third copy back (yolo's
    # 2x nearest upsampling of (32, 64, 4, 4): 828 against 176 us per call).
    pixels = dims == 2 and suggest_memory_format(input) is channels_last
    dtype = input.dtype
    if is_reduced(dtype) and not mode.startswith("nearest"):
        input = input.float()  # weights and sums in float32, rounded once, as torch's kernels (NOTE [ opmath ])
    out = input.permute(0, 2, 3, 1) if pixels else input
    for d in range(dims):
        in_size = input.shape[2 + d]
        if mode.startswith("nearest"):
            taps = [(nearest_positions(in_size, sizes[d], scales[d], exact=mode == "nearest-exact"), None)]
        elif antialias:
            taps = antialias_taps(in_size, sizes[d], scales[d], align_corners, np.dtype(input._data.dtype), mode)
        elif mode == "bicubic":
            taps = cubic_taps(in_size, sizes[d], scales[d], align_corners, np.dtype(input._data.dtype))
        else:
            left, right, t = linear_positions(in_size, sizes[d], scales[d], align_corners,
                                              np.dtype(input._data.dtype))
            taps = [(left, 1 - t), (right, t)]
        out = resample(out, 1 + d if pixels else 2 + d, taps)
    out = out.permute(0, 3, 1, 2) if pixels else out
    return out if out.dtype is dtype else out.to(dtype)


def _upsample_bilinear2d_aa(input, output_size, align_corners, scale_factors=None, scales_h=None, scales_w=None):
    """ATen's antialiased bilinear resize (``torch._upsample_bilinear2d_aa``), as
    ``interpolate(..., mode="bilinear", antialias=True)``."""
    if output_size is None or scale_factors is not None:
        return interpolate(input, scale_factor=tuple(scale_factors), mode="bilinear", align_corners=align_corners,
                           antialias=True)
    return _resample_dims(input, tuple(output_size), (scales_h, scales_w), "bilinear", align_corners, True)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """:func:`interpolate` under its old name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
