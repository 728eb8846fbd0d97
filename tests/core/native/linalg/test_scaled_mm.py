"""_scaled_mm and _scaled_mm_v2 (ember/native/linalg/scaled_mm.py) against torch's CPU
kernel: float8 e4m3fn/e5m2 operands (mixed too), tensor-wise and row-wise scales, bias,
scale_result, every out_dtype (default: the first operand's), a column-major second
operand; bit-exact in float8 and bfloat16, to float32 rounding in float32; the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close, make_tensor

F8 = ["float8_e4m3fn", "float8_e5m2"]


def _operands(lib, dtype_a, dtype_b, m=15, k=16, n=32):
    a = lib.tensor(make_tensor((m, k), "float32", low=-8, high=8)).to(getattr(lib, dtype_a))
    b = lib.tensor(make_tensor((n, k), "float32", low=-8, high=8, seed=1)).to(getattr(lib, dtype_b)).t()
    return a, b


def _same(actual, expected):
    assert actual.dtype.name == str(expected.dtype).removeprefix("torch.")
    if expected.dtype == torch.float32:
        assert_close(actual, expected)
    else:  # rounded to a narrow dtype: bit for bit
        np.testing.assert_array_equal(np.asarray(actual.float().numpy()), expected.float().numpy())


@pytest.mark.parametrize("dtype_a", F8)
@pytest.mark.parametrize("dtype_b", F8)
@pytest.mark.parametrize("out_dtype", [None, "float32", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("extras", [(), ("bias",), ("scale_result",), ("bias", "scale_result")])
def test_scaled_mm(dtype_a, dtype_b, out_dtype, extras):
    results = []
    for lib in (ember, torch):
        a, b = _operands(lib, dtype_a, dtype_b)
        kwargs = {} if out_dtype is None else {"out_dtype": getattr(lib, out_dtype)}
        if "bias" in extras:
            kwargs["bias"] = lib.tensor(make_tensor((32,), "float32", seed=3)).to(
                getattr(lib, out_dtype) if out_dtype in ("float32", "bfloat16") else lib.float32)
        if "scale_result" in extras:
            kwargs["scale_result"] = lib.tensor(3.0)
        if "bias" in extras and out_dtype not in ("float32", "bfloat16"):
            kwargs.pop("bias")  # torch wants the bias in the output dtype, a float one
        results.append(lib._scaled_mm(a, b, lib.tensor(0.37), lib.tensor(1.91), **kwargs))
    _same(*results)


@pytest.mark.parametrize("rowwise", [False, True])
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32"])
def test_scaled_mm_v2(rowwise, out_dtype):
    results = []
    for lib in (ember, torch):
        a, b = _operands(lib, "float8_e4m3fn", "float8_e4m3fn")
        shapes = ((15, 1), (1, 32)) if rowwise else ((1,), (1,))
        scale_a, scale_b = (lib.tensor(make_tensor(s, "float32", seed=4 + i)) for i, s in enumerate(shapes))
        recipe = [torch.nn.functional.ScalingType.RowWise if rowwise else torch.nn.functional.ScalingType.TensorWise]
        swizzle = [torch.nn.functional.SwizzleType.NO_SWIZZLE]
        results.append(lib._scaled_mm_v2(a, b, [scale_a], recipe, swizzle, [scale_b], recipe, swizzle, None,
                                         getattr(lib, out_dtype)))
    _same(*results)


@pytest.mark.parametrize("out_dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_scaled_mm_saturates_as_torch_converts(out_dtype):
    # products past 448 become +-448 in e4m3fn (no inf there) and inf in e5m2
    results = []
    for lib in (ember, torch):
        a, b = _operands(lib, "float8_e4m3fn", "float8_e4m3fn")
        results.append(lib._scaled_mm(a, b, lib.tensor(30.0), lib.tensor(40.0), out_dtype=getattr(lib, out_dtype)))
    _same(*results)


def test_scaled_mm_errors():
    for lib in (ember, torch):
        a, b = _operands(lib, "float8_e4m3fn", "float8_e4m3fn")
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            lib._scaled_mm(a, a, lib.tensor(1.0), lib.tensor(1.0))
        with pytest.raises(RuntimeError, match="must be a matrix"):
            lib._scaled_mm(a[0], b, lib.tensor(1.0), lib.tensor(1.0))
