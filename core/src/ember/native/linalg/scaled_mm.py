"""``_scaled_mm`` and ``_scaled_mm_v2``: the product of two float8 matrices with scales,
the matmul of FP8 training and inference.

PyTorch counterpart: aten/src/ATen/native/Blas.cpp (``_scaled_mm_out_cpu_emulated``,
``_scaled_mm_v2``) (v2.13).

ember computes in float8 nowhere (NOTE [ Barebones dtypes ] in ember/dtypes.py), and
neither does PyTorch's CPU: its kernel widens. So this one works on the arrays, in
PyTorch's order: each operand to float32 times its scale (a number, or a column/row of
scales for row-wise scaling, which broadcast), the float32 matmul, plus the bias, times
``1 / scale_result`` when ``out_dtype`` names a float8 type (not when the output is
float8 by default), then rounded to ``out_dtype`` (by default the first operand's dtype). No gradient, as in PyTorch.
"""

import numpy as np

from ember import dtypes
from ember.dispatcher import NONE, Op

_FLOAT8_OUT = ("float8_e4m3fn", "float8_e5m2")


def _scaled_mm_kernel(xp, mat1, mat2, scale_a, scale_b, *rest, out_dtype, has_bias, divide_by_result_scale):
    f32 = np.float32
    out = xp.matmul(mat1.astype(f32) * scale_a.astype(f32), mat2.astype(f32) * scale_b.astype(f32))
    if has_bias:
        out += rest[0].astype(f32)
        rest = rest[1:]
    if rest and divide_by_result_scale:  # scale_result
        out *= f32(1) / rest[0].astype(f32).reshape(())
    return dtypes.cast_array(out, dtypes.to_dtype(out_dtype).np)  # e4m3fn saturates, as torch's


SCALED_MM = Op("aten::_scaled_mm", _scaled_mm_kernel, promote=NONE)


def _check(mat1, mat2):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("mat1 must be a matrix" if mat1.ndim != 2 else "mat2 must be a matrix")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")


def _scaled(mat1, mat2, scale_a, scale_b, bias, scale_result, out_dtype):
    _check(mat1, mat2)
    tensors = [mat1, mat2, scale_a, scale_b] + [t for t in (bias, scale_result) if t is not None]
    # scale_result divides only an explicitly float8 output (not the default, mat1's dtype)
    divide = out_dtype is not None and dtypes.to_dtype(out_dtype).name in _FLOAT8_OUT
    out_dtype = dtypes.to_dtype(out_dtype) if out_dtype is not None else mat1.dtype
    return SCALED_MM(*tensors, out_dtype=out_dtype.name, has_bias=bias is not None, divide_by_result_scale=divide)


def _scaled_mm(mat1, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    """``(mat1 * scale_a) @ (mat2 * scale_b) + bias`` in float32, rounded to ``out_dtype``
    (default: ``mat1``'s); a float8 output is first divided by ``scale_result``.
    ``use_fast_accum`` changes nothing on the CPU.

    >>> import ember
    >>> a = ember.ones(2, 3).to(ember.float8_e4m3fn)
    >>> ember._scaled_mm(a, a.t(), ember.tensor(0.5), ember.tensor(2.0), out_dtype=ember.float32)
    tensor([[3., 3.],
            [3., 3.]])
    """
    return _scaled(mat1, mat2, scale_a, scale_b, bias, scale_result, out_dtype)


def _scaled_mm_v2(mat1, mat2, scale_a, recipe_a, swizzle_a, scale_b, recipe_b, swizzle_b, bias=None,
                  out_dtype=None, contraction_dim=(), use_fast_accum=False):
    """:func:`_scaled_mm` with the scales as lists (one scale tensor each: a number for
    tensor-wise scaling, a column of ``mat1``'s rows and a row of ``mat2``'s columns for
    row-wise scaling) and their recipes and swizzles, which the CPU reads only as the
    scales' shapes."""
    if len(scale_a) != 1 or len(scale_b) != 1:
        raise NotImplementedError("_scaled_mm_v2: ember takes one scale per operand (tensor-wise or row-wise)")
    return _scaled(mat1, mat2, scale_a[0], scale_b[0], bias, None, out_dtype)
