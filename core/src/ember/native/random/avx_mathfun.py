"""The single-precision ``log`` and ``sin``/``cos`` that PyTorch's float ``normal_`` uses
on x86-64, rewritten in NumPy float32 so that ember's normals are bit-for-bit PyTorch's.

PyTorch counterpart: aten/src/ATen/native/cpu/avx_mathfun.h (``log256_ps``,
``sincos256_ps``; after Julien Pommier's sse_mathfun, itself the Cephes ``logf`` and
``sinf``/``cosf``) (v2.13).

# NOTE [ Why ember rewrites PyTorch's log and sincos ]
# ``torch.randn`` of float32 (16 elements or more, contiguous) computes Box-Muller with
# these vectorised Cephes approximations, not with the C library's ``logf``/``cosf``.
# They are accurate to a few units in the last place, but their last bits are their
# own, so the same uniforms through NumPy's ``log`` give normals that differ in the
# last bit. Replaying the same float32 operations in the same order gives the same
# bits. PyTorch's compiler fuses each ``a * b + c`` of these polynomials into one
# fused multiply-add (one rounding); ``_fma`` reproduces that in float64, where the
# product of two float32 numbers is exact.
"""

import numpy as np

f32 = np.float32

_SQRTHF = f32(0.707106781186547524)
_LOG_P = [f32(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                           1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                           3.3333331174E-1)]
_LOG_Q1 = f32(-2.12194440e-4)
_LOG_Q2 = f32(0.693359375)
_MIN_NORM_POS = np.array(0x00800000, dtype=np.uint32).view(np.float32)

_DP1, _DP2, _DP3 = f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8)
_SINCOF = [f32(c) for c in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_COSCOF = [f32(c) for c in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)]
_FOPI = f32(1.27323954473516)  # 4 / pi


def fma(a, b, c):
    """``a * b + c`` with one rounding to float32 (the product of two float32 numbers is
    exact in float64; the sum is rounded to float64, then to float32)."""
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32) if np.ndim(a) or np.ndim(b) \
        or np.ndim(c) else f32(np.float64(a) * np.float64(b) + np.float64(c))


def log256_ps(x):
    """Natural log of positive float32 ``x``: split x = m * 2**e with m in [sqrt(1/2),
    sqrt(2)), then a degree-8 polynomial in m - 1 (Cephes ``logf``)."""
    x = np.maximum(x, _MIN_NORM_POS)  # denormals are cut off
    bits = x.view(np.uint32)
    exponent = (bits >> np.uint32(23)).astype(np.int32) - 0x7F
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)  # mantissa in [0.5, 1)
    e = exponent.astype(np.float32) + f32(1)
    small = x < _SQRTHF  # then use 2m - 1 and one less in the exponent
    e = e - np.where(small, f32(1), f32(0))
    x = (x - f32(1)) + np.where(small, x, f32(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for coefficient in _LOG_P[1:]:
        y = fma(y, x, coefficient)
    y = y * x
    y = fma(y, z, e * _LOG_Q1)
    y = fma(z, f32(-0.5), y)
    x = x + y
    return fma(e, _LOG_Q2, x)


def sincos256_ps(x):
    """``(sin(x), cos(x))`` of non-negative float32 ``x``: reduce by multiples of pi/4
    in three parts (Cody-Waite), then the Cephes polynomials on [-pi/4, pi/4]."""
    octant = (x * _FOPI).astype(np.int32)  # truncation, as _mm256_cvttps_epi32
    octant = (octant + 1) & ~1  # round up to even
    y = octant.astype(np.float32)
    sin_negative = (octant & 4) != 0
    use_sin_poly = (octant & 2) == 0  # which polynomial gives the sine
    x = fma(y, _DP1, x)
    x = fma(y, _DP2, x)
    x = fma(y, _DP3, x)
    cos_negative = (~(octant - 2) & 4) != 0

    z = x * x
    cos_poly = fma(np.full_like(x, _COSCOF[0]), z, _COSCOF[1])
    cos_poly = fma(cos_poly, z, _COSCOF[2])
    cos_poly = cos_poly * z
    cos_poly = fma(cos_poly, z, -(z * f32(0.5)))
    cos_poly = cos_poly + f32(1)

    sin_poly = fma(np.full_like(x, _SINCOF[0]), z, _SINCOF[1])
    sin_poly = fma(sin_poly, z, _SINCOF[2])
    sin_poly = sin_poly * z
    sin_poly = fma(sin_poly, x, x)

    sine = np.where(use_sin_poly, sin_poly, cos_poly)
    cosine = np.where(use_sin_poly, cos_poly, sin_poly)
    sine = np.where(sin_negative, -sine, sine)
    cosine = np.where(cos_negative, -cosine, cosine)
    return sine, cosine
