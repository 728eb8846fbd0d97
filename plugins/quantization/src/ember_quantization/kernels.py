"""The quantized operators, ``ember.ops.quantized.*``: quantize, dequantize, int8 linear and conv, add, cat, relu.

PyTorch counterpart: aten/src/ATen/native/quantized/cpu/qlinear.cpp,
aten/src/ATen/native/quantized/cpu/qlinear_dynamic.cpp,
aten/src/ATen/native/quantized/cpu/qconv.cpp, aten/src/ATen/native/quantized/cpu/qadd.cpp,
aten/src/ATen/native/quantized/cpu/qconcat.cpp, aten/src/ATen/native/quantized/cpu/qrelu.cpp
and aten/src/ATen/native/quantized/AffineQuantizerBase.cpp (v2.13).

Each op works on the integer arrays of quantized tensors; the scales and zero points
travel as attributes (per-tensor) or as tensors (per-channel). The ops are ordinary
ember ops, so ``ember explain quantized::linear`` names this file.

# NOTE [ Exact integer GEMM on a float BLAS ]
NumPy's integer ``matmul`` runs a plain loop, not BLAS: a 512x512 int32 product is
about 30x slower than the float32 one. The int8 kernels therefore multiply the
zero-point-shifted integers as floats. That is exact, not an approximation:

- a shifted activation ``x - zx`` and weight ``w - zw`` are integers with
  ``|x - zx| <= A`` and ``|w - zw| <= B`` (A, B <= 255 for 8-bit data), so every
  product is an integer of magnitude at most ``A * B``, and every partial sum of a
  dot product of length K, in whatever order BLAS adds (blocked, vectorised, with
  FMA, which rounds ``a * b + c`` once), is an integer of magnitude at most ``K * A * B``;
- a binary float with a p-bit significand represents every integer up to ``2**p``
  exactly, and the sum, product or FMA of two exactly represented integers whose exact
  result is at most ``2**p`` is computed without rounding;
- so when ``K * A * B <= 2**24`` float32 gives the exact int32 accumulator, and when
  ``K * A * B <= 2**53`` float64 does. A qint8 weight shifted by a zero point of 0 has
  B = 128 and a quint8 activation A <= 255, so float32 is exact up to K = 514 (a 3x3
  conv over 57 channels, a 512-wide Linear), float64 up to K = 2.7e11, beyond any layer.
  The modules take A and B from the zero points and the dtypes' ranges (no scan of the
  data, ``gemm_dtype``) and keep the weight shifted into the chosen type once
  (NOTE [ Packed weights ]); the kernels shift the activations into the packed
  weight's type and keep the accumulator there (it holds exact integers); int64 is the
  fallback past float64.

The accumulator is then requantised as torch's fbgemm kernels do: ``acc * (sx * sw)
+ bias`` in float32, divided by the output scale, rounded half to even, shifted by the
output zero point and clamped. fbgemm folds the same terms in a slightly different
order, so an output may differ from torch's by one quantisation step (the tests'
tolerance); the accumulator itself is bit-exact.
"""

import numpy as np

from ember import library

FLOAT32_EXACT = 2 ** 24
FLOAT64_EXACT = 2 ** 53


def int_matmul(xp, a, b, bound=None):
    """``a @ b`` for integer-valued arrays, exact (NOTE [ Exact integer GEMM on a float
    BLAS ]).

    ``bound`` is ``max|a| * max|b|`` if the caller knows it from the dtypes' ranges (no
    scan of the data); the result is float32 or float64 holding exact integers, or int64
    when neither float type is exact.
    """
    k = a.shape[-1]
    if a.size == 0 or b.size == 0 or k == 0:
        return xp.zeros((*a.shape[:-1], b.shape[-1]), dtype=xp.float64)
    if bound is None:
        bound = int(xp.abs(a).max()) * int(xp.abs(b).max())
    if k * bound <= FLOAT32_EXACT:
        return xp.matmul(a.astype(xp.float32, copy=False),
                         b.astype(xp.float32, copy=False))
    if k * bound <= FLOAT64_EXACT:
        return xp.matmul(a.astype(xp.float64, copy=False),
                         b.astype(xp.float64, copy=False))
    return xp.matmul(a.astype(xp.int64), b.astype(xp.int64))


def _gemm_dtype(xp, k, bound):
    """The type ``int_matmul`` uses for length-``k`` products of operands bounded by ``bound``."""
    if k * bound <= FLOAT32_EXACT:
        return xp.float32
    return xp.float64 if k * bound <= FLOAT64_EXACT else xp.int64


def gemm_dtype(k, activation_bound, weight_bound):
    """The name of the type a packed weight must have for a length-``k`` product whose
    shifted activations are at most ``activation_bound`` and shifted weights at most
    ``weight_bound`` (NOTE [ Exact integer GEMM on a float BLAS ]): "float32", "float64" or "int64"."""
    return np.dtype(_gemm_dtype(np, k, activation_bound * weight_bound)).name


def activation_bound(zero_point, qmin=0, qmax=255):
    """The largest ``|q - zero_point|`` over the dtype's range ``[qmin, qmax]``."""
    return max(abs(int(qmin) - int(zero_point)), abs(int(qmax) - int(zero_point)))


def weight_bound(w_zero_points):
    """The largest ``|w - zw|`` a qint8 weight can have, over all its rows' zero points (an int64 Tensor)."""
    zero_points = w_zero_points.numpy().astype(np.int64)
    return int(np.maximum(np.abs(-128 - zero_points), np.abs(127 - zero_points)).max()) if zero_points.size else 0


# NOTE [ Packed weights ]
# torch's quantized Linear and Conv2d keep their weight "packed" (fbgemm's
# ``PackedLinearWeight`` behind ``LinearPackedParams._packed_params``): reordered for
# the GEMM once, when the weight is set, never per call. ember's packing is the
# shifted weight ``w - zw`` in the GEMM's float type (or int64), one row per output
# channel, its columns in the order the kernels read activations (``kh, kw, C`` for a
# convolution, whose windows are channels-last). ``pack_weight`` makes it;
# WeightedQuantizedModule (nn/quantized/utils.py) keeps one per GEMM type and drops
# them when ``set_weight_bias`` sets a new weight (loading a state dict does too).
@library.custom_op("quantized::pack_weight")
def pack_weight(xp, w, w_zero_points, *, dtype):
    """``(w - zw)`` as ``dtype`` ("float32", "float64", "int64"), shape (out, K) (NOTE [ Packed weights ])."""
    dtype = xp.dtype(dtype)
    shifted = w.astype(dtype) - w_zero_points.reshape((-1,) + (1,) * (w.ndim - 1)).astype(dtype)
    if w.ndim == 4:  # (out, C, kh, kw) -> (out, kh, kw, C): the order of the channels-last windows
        shifted = shifted.transpose(0, 2, 3, 1)
    return xp.ascontiguousarray(shifted.reshape(w.shape[0], -1))


def _channel_shape(ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return shape


# --- quantize / dequantize -----------------------------------------------------------------
@library.custom_op("quantized::quantize_per_tensor")
def quantize_per_tensor(xp, x, *, scale, zero_point, qmin, qmax, storage):
    """``clamp(rint(x * (1 / scale) + zero_point), qmin, qmax)`` (NOTE [ Rounding as torch quantizes ])."""
    inv_scale = xp.float32(1.0) / xp.float32(scale)
    return _round_clamp(xp, x, inv_scale, zero_point, qmin, qmax, storage)


@library.custom_op("quantized::quantize_per_channel")
def quantize_per_channel(xp, x, scales, zero_points, *, axis, qmin, qmax, storage):
    """``quantize_per_tensor`` with a scale and zero point per slice along ``axis``."""
    shape = _channel_shape(x.ndim, axis)
    inv_scale = (xp.float32(1.0) / scales.astype(xp.float32)).reshape(shape)
    # torch's per-channel loop (scalar fbgemm Quantize) rounds the product, then the sum: no FMA
    unfused = x.astype(xp.float32) * inv_scale + zero_points.reshape(shape).astype(xp.float32)
    return xp.clip(xp.rint(unfused), qmin, qmax).astype(storage)


# NOTE [ Rounding as torch quantizes ]
# torch's vectorised quantizer computes x * inv_scale + zero_point as one fused
# multiply-add in float32 (inv_scale = 1.0f / scale) and rounds that with nearbyint, half
# to even. The zero point is added *before* rounding: with scale 0.5 and zero point 11,
# x = 0.25 gives rint(11.5) = 12, not rint(0.5) + 11 = 11. The product of two float32s
# and a small integer sum are exact in float64, and the FMA's one rounding is the cast of
# that exact value to float32, *before* rint: x * inv_scale = 17.4999997 with zero point
# 100 is 117.4999997, which float32 holds as 117.5, so torch gives 118, not 117
# (tests/plugins/quantization/test_qtensor.py checks such half-way values).
def _round_clamp(xp, x, inv_scale, zero_point, qmin, qmax, storage):
    fused = x.astype(xp.float32).astype(xp.float64) * xp.asarray(inv_scale).astype(xp.float64) + zero_point
    return xp.clip(xp.rint(fused.astype(xp.float32)), qmin, qmax).astype(storage)


@library.custom_op("quantized::dequantize_per_tensor")
def dequantize_per_tensor(xp, q, *, scale, zero_point):
    """``(q - zero_point) * scale`` in float32."""
    return (q.astype(xp.float32) - xp.float32(zero_point)) * xp.float32(scale)


@library.custom_op("quantized::dequantize_per_channel")
def dequantize_per_channel(xp, q, scales, zero_points, *, axis):
    """``(q - zero_point) * scale`` per channel, the product in float64 (torch's per-channel scales are doubles)."""
    shape = _channel_shape(q.ndim, axis)
    shifted = q.astype(xp.int64) - zero_points.reshape(shape).astype(xp.int64)
    return (shifted * scales.reshape(shape).astype(xp.float64)).astype(xp.float32)


# --- linear --------------------------------------------------------------------------------
def _linear_accumulator(xp, x, x_zero_point, packed):
    """Exact ``(x - zx) @ (w - zw).T`` over the last dimension of ``x``, in ``packed``'s type."""
    dtype = packed.dtype.type
    shifted_x = x.astype(dtype) - dtype(x_zero_point)
    flat = shifted_x.reshape(-1, shifted_x.shape[-1])
    return xp.matmul(flat, packed.T).reshape(*x.shape[:-1], packed.shape[0])


def _requantize(xp, acc, multiplier, bias, out_scale, out_zero_point, relu, qmin, qmax, storage):
    """fbgemm's float requantisation: ``rint((acc * sx * sw + bias) / s_out) + z_out``, clamped.

    In place on the accumulator (a temporary of the kernel's own): the same float32 operations
    in the same order, without five temporaries the size of the output."""
    real = acc.astype(xp.float32, copy=False)
    real *= multiplier.astype(xp.float32)
    real += bias.astype(xp.float32)
    real /= xp.float32(out_scale)
    xp.rint(real, out=real)
    real += xp.float32(out_zero_point)
    if relu:
        qmin = max(qmin, out_zero_point)
    return xp.clip(real, qmin, qmax, out=real).astype(storage)


@library.custom_op("quantized::linear")
def linear(xp, x, packed, w_scales, bias, *, x_scale, x_zero_point, out_scale,
           out_zero_point, relu=False):
    """Static int8 linear: quint8 ``x`` and a packed qint8 weight (``pack_weight``, one
    scale per output row) to quint8.

    ``y = requant((x - zx) @ (w - zw).T * sx * sw + bias)`` with an exact integer
    accumulator.
    """
    acc = _linear_accumulator(xp, x, x_zero_point, packed)
    multiplier = w_scales.astype(xp.float64) * x_scale
    return _requantize(xp, acc, multiplier, bias, out_scale, out_zero_point, relu,
                       0, 255, xp.uint8)


@library.custom_op("quantized::linear_dynamic")
def linear_dynamic(xp, x, packed, w_scales, bias, *, reduce_range=True, relu=False):
    """Dynamic int8 linear: float ``x`` is quantised per call (its own min/max), output is float32.

    ``packed`` must be exact for activations up to 127 (``reduce_range``) or 255."""
    x = x.astype(xp.float32)
    qmax = 127 if reduce_range else 255
    lo = min(float(x.min()), 0.0) if x.size else 0.0
    hi = max(float(x.max()), 0.0) if x.size else 0.0
    scale, zero_point = choose_qparams(lo, hi, 0, qmax)
    xq = quantize_per_tensor.generic(xp, x, scale=scale, zero_point=zero_point, qmin=0, qmax=qmax,
                                     storage=xp.uint8)
    acc = _linear_accumulator(xp, xq, zero_point, packed)
    multiplier = (w_scales.astype(xp.float64) * scale).astype(xp.float32)
    out = acc.astype(xp.float32, copy=False) * multiplier + bias.astype(xp.float32)
    return xp.maximum(out, xp.float32(0)) if relu else out


def choose_qparams(lo, hi, qmin, qmax):
    """fbgemm's ``ChooseQuantizationParams`` (no sparsity preservation): scale and zero point
    mapping ``[lo, hi]`` (already widened to contain 0) onto ``[qmin, qmax]``."""
    small_scale = 6.1e-5
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    if scale < small_scale:  # fbgemm widens tiny ranges so the scale stays representable
        original, scale = scale, small_scale
        if lo == 0:
            hi = scale * (qmax - qmin)
        elif hi == 0:
            lo = -scale * (qmax - qmin)
        else:
            lo, hi = lo * small_scale / original, hi * small_scale / original
    scale = float(np.float32(scale))
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    error_min, error_max = abs(qmin) - abs(lo / scale), abs(qmax) - abs(hi / scale)
    initial = from_min if error_min < error_max else from_max
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return scale, zero_point


# --- conv2d --------------------------------------------------------------------------------
def _im2col(xp, x, kernel, stride, padding, dilation, pad_value):
    """(N, C, H, W) -> (N, out_h, out_w, kh, kw, C) windows, padding with ``pad_value``.

    The input goes channels-last first, so that flattening a window copies runs of C
    contiguous values (gathering from NCHW windows was 3x slower)."""
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    x = xp.pad(x.transpose(0, 2, 3, 1), ((0, 0), (ph, ph), (pw, pw), (0, 0)), constant_values=pad_value)
    kh, kw = kernel
    windows = xp.lib.stride_tricks.sliding_window_view(x, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(1, 2))
    windows = windows[:, ::sh, ::sw, :, ::dh, ::dw]
    return windows.transpose(0, 1, 2, 4, 5, 3)


@library.custom_op("quantized::conv2d")
def conv2d(xp, x, packed, w_scales, bias, *, kernel_size, stride, padding, dilation, groups, x_scale,
           x_zero_point, out_scale, out_zero_point, relu=False):
    """Static int8 2-d convolution: quint8 ``x``, a packed qint8 weight (``pack_weight``, one
    scale per output channel), quint8 out.

    Zero padding pads with the activation's zero point, which is the real value 0.
    """
    n = x.shape[0]
    out_channels = packed.shape[0]
    (kh, kw), dtype = kernel_size, packed.dtype.type
    group_in = packed.shape[1] // (kh * kw)
    # shifted first, so zero padding is the real value 0 (the zero point), and in the GEMM's type
    windows = _im2col(xp, x.astype(dtype) - dtype(x_zero_point), (kh, kw), stride, padding, dilation, 0)
    _, out_h, out_w = windows.shape[:3]
    group_out = out_channels // groups
    parts = []
    for g in range(groups):
        cols = windows[..., g * group_in:(g + 1) * group_in].reshape(n * out_h * out_w, kh * kw * group_in)
        parts.append(xp.matmul(cols, packed[g * group_out:(g + 1) * group_out].T))
    acc = (parts[0] if groups == 1 else xp.concatenate(parts, axis=1)).reshape(n, out_h, out_w, out_channels)
    multiplier = w_scales.astype(xp.float64) * x_scale
    out = _requantize(xp, acc, multiplier, bias, out_scale, out_zero_point, relu, 0, 255, xp.uint8)
    return xp.ascontiguousarray(out.transpose(0, 3, 1, 2))


# --- elementwise ---------------------------------------------------------------------------
# NOTE [ torch's quantized add, bit for bit ]
# torch's qadd (aten/src/ATen/native/quantized/cpu/kernels/QuantizedOpKernels.cpp,
# ``qadd_kernel``) dequantizes both inputs, adds in float32 and quantizes the sum to the
# output's qparams, but it runs two loops whose roundings differ, and which element
# takes which is fixed by the vector width of torch's CPU build
# (aten/src/ATen/native/cpu/Loops.h, ``vectorized_loop``): elements in whole blocks of
# two vectors (2 x 32 quint8 with AVX2: 64) take the vector loop, the rest the scalar one.
# - vector loop: ``x = fma(s, q, s * -z)`` (one rounding; ``s * -z`` rounded first), then
#   ``rint(sum * (1/s_out)) + z_out`` (the zero point added after rounding);
# - scalar loop: ``x = s * (q - z)``, then fbgemm's scalar ``Quantize``:
#   ``rint(z_out + sum * (1/s_out))`` in float32 (the zero point added before rounding).
# On a half-way sum (``s_out = 2 s``) the two differ by one step, so ember runs the
# same two formulas on the same elements. The FMA is computed in float64 and rounded
# once: ``s * q`` (24-bit times 8-bit) and ``s * -z`` (a float32) are multiples of the
# last bit of ``s`` below ``2**10 * s``, so their sum is exact in float64's 53 bits.
# The element split assumes torch ran the add as one chunk of its loop: always with one
# thread, and with more for at most 32768 elements (torch's grain size); beyond that
# each thread's chunk has its own scalar tail. The block is 64 (torch's AVX2 build, what
# torch reports on x86 machines without AVX-512: ``torch.backends.cpu.get_cpu_capability()``).
QADD_BLOCK = 64


@library.custom_op("quantized::add")
def add(xp, a, b, *, a_scale, a_zero_point, b_scale, b_zero_point, out_scale, out_zero_point, relu=False):
    """``requant(dequant(a) + dequant(b))`` to quint8, rounded as torch's qadd rounds
    (NOTE [ torch's quantized add, bit for bit ])."""
    a, b = xp.broadcast_arrays(a, b)
    shape = a.shape
    a, b = a.reshape(-1), b.reshape(-1)
    split = a.size // QADD_BLOCK * QADD_BLOCK
    parts = []
    for part, vector in ((slice(0, split), True), (slice(split, a.size), False)):
        dequantize = _dequantize_fma if vector else _dequantize_scalar
        total = dequantize(xp, a[part], a_scale, a_zero_point) + dequantize(xp, b[part], b_scale, b_zero_point)
        if relu:
            total = xp.maximum(total, xp.float32(0))
        parts.append(_quantize_sum(xp, total, out_scale, out_zero_point, zero_point_first=not vector))
    return xp.concatenate(parts).reshape(shape)


def _dequantize_fma(xp, q, scale, zero_point):
    """``fma(s, q, s * -z)`` in float32, computed exactly in float64 and rounded once."""
    scale = xp.float32(scale)
    premultiplied = scale * xp.float32(-zero_point)
    return (q.astype(xp.float64) * xp.float64(scale) + xp.float64(premultiplied)).astype(xp.float32)


def _dequantize_scalar(xp, q, scale, zero_point):
    """``s * (q - z)`` in float32 (torch's ``dequantize_val``)."""
    return (q.astype(xp.int32) - zero_point).astype(xp.float32) * xp.float32(scale)


def _quantize_sum(xp, total, scale, zero_point, zero_point_first):
    inv_scale = xp.float32(1.0) / xp.float32(scale)
    scaled = total * inv_scale
    q = xp.rint(scaled + xp.float32(zero_point)) if zero_point_first else xp.rint(scaled) + zero_point
    return xp.clip(q, 0, 255).astype(xp.uint8)


@library.custom_op("quantized::relu")
def relu(xp, q, *, zero_point):
    """``max(q, zero_point)``: the zero point is the real 0, so ReLU never leaves the integers."""
    return xp.maximum(q, xp.asarray(zero_point, dtype=q.dtype))


@library.custom_op("quantized::cat")
def cat(xp, *arrays, scales, zero_points, dim, out_scale, out_zero_point):
    """Concatenate quint8 arrays with the output's scale and zero point, as torch's qcat:
    the integers as they are when every input already has the output's qparams, else
    each input dequantized (``s * (q - z)``, float32), concatenated and quantized as
    ``quantize_per_tensor`` quantizes."""
    if all(s == out_scale and z == out_zero_point for s, z in zip(scales, zero_points)):
        return xp.concatenate(arrays, axis=dim)
    real = xp.concatenate([_dequantize_scalar(xp, a, s, z) for a, s, z in zip(arrays, scales, zero_points)], axis=dim)
    return _round_clamp(xp, real, xp.float32(1.0) / xp.float32(out_scale), out_zero_point, 0, 255, xp.uint8)


def all_ops():
    """Every op of the plugin, the fake-quantization pair included (imported here to keep one list)."""
    from ember_quantization.fake_quantize import fake_quantize_affine, fake_quantize_mask

    return OPS + (fake_quantize_affine, fake_quantize_mask)


OPS = (quantize_per_tensor, quantize_per_channel, dequantize_per_tensor, dequantize_per_channel, pack_weight,
       linear, linear_dynamic, conv2d, add, relu, cat)
