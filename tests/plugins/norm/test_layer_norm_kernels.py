"""The fused layer-norm kernels (matrix-vector row and column sums, NOTE [ Layer norm
backward in row and column sums ]) against torch: values and gradients of input,
weight and bias in float32 and float64, odd and multi-dim normalized shapes,
non-contiguous input, no affine, empty inputs, and rows far from zero.

Tests for plugins/norm/src/ember_norm/ops/layer_norm.py (PyTorch counterpart:
aten/src/ATen/native/layer_norm.cpp, v2.13).
"""

import numpy as np
import pytest

import ember
from ember.testing import assert_parity, make_tensor

# Every test runs on the installed cpu kernels and on ember-norm's NumPy ones (conftest.py).
pytestmark = pytest.mark.usefixtures("cpu_kernels")

TOLERANCES = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-10, atol=1e-10)}


def affine(shape, normalized):
    return lambda lib, x, w, b: lib.nn.functional.layer_norm(x, normalized, w, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, normalized", [((32, 64, 256), (256,)), ((3, 7), (7,)), ((5, 3, 4), (3, 4)),
                                                ((2, 9000), (9000,))])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_affine_matches_torch(dtype, shape, normalized, noncontiguous):
    x = make_tensor(shape, dtype, seed=0)
    w, b = make_tensor(normalized, dtype, seed=1), make_tensor(normalized, dtype, seed=2)
    assert_parity(affine(shape, normalized), x, w, b, noncontiguous=noncontiguous, **TOLERANCES[dtype],
                  grad_rtol=TOLERANCES[dtype]["rtol"], grad_atol=TOLERANCES[dtype]["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 6, 10), (3, 1), (1, 1)])
def test_without_affine_matches_torch(dtype, shape):
    x = make_tensor(shape, dtype, seed=3)
    assert_parity(lambda lib, x: lib.nn.functional.layer_norm(x, shape[-1:]), x, **TOLERANCES[dtype],
                  grad_rtol=TOLERANCES[dtype]["rtol"], grad_atol=TOLERANCES[dtype]["atol"])


@pytest.mark.parametrize("shape", [(0, 5), (2, 0, 5)])
def test_empty_batch_matches_torch(shape):
    x = make_tensor(shape, "float32")
    w, b = make_tensor((5,), "float32", seed=1), make_tensor((5,), "float32", seed=2)
    assert_parity(affine(shape, (5,)), x, w, b)


def test_offset_rows_match_torch():
    # Rows far from zero: the statistics stay two-pass and the backward works on xhat.
    x = (1000.0 + make_tensor((16, 128), "float32", seed=4)).astype(np.float32)
    w, b = make_tensor((128,), "float32", seed=1), make_tensor((128,), "float32", seed=2)
    assert_parity(affine(x.shape, (128,)), x, w, b, rtol=1e-3, atol=1e-3, grad_rtol=1e-3, grad_atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_pass_statistics_are_checked_row_by_row(dtype):
    # NOTE [ Layer norm statistics in one pass, checked ]: rows whose |mean| exceeds their
    # spread (1e2 and 1e4 times) take the second pass; the others keep the one-pass
    # variance. Both stay within float rounding of a float64 two-pass reference.
    x = make_tensor((6, 256), "float64", seed=5)
    x[1] = x[1] * 0.01 + 1.0
    x[2] = x[2] * 1e-4 + 1.0
    x[3] += 0.9
    x = x.astype(dtype)
    mean, rstd = ember.ops.norm.layer_norm_stats(ember.tensor(x), normalized_ndim=1, eps=0.0)
    reference = x.astype(np.float64)
    expected = 1 / np.sqrt(((reference - reference.mean(1, keepdims=True)) ** 2).mean(1))
    np.testing.assert_allclose(rstd.numpy().ravel(), expected, rtol=2e-6 if dtype == "float32" else 1e-12)
    tol = TOLERANCES[dtype]
    w, b = make_tensor((256,), dtype, seed=1), make_tensor((256,), dtype, seed=2)
    assert_parity(affine(x.shape, (256,)), x, w, b, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("shape, normalized", [((3, 0), (0,)), ((2, 0, 4), (0, 4)), ((2, 4, 0), (0,))])
def test_rows_of_no_values_match_torch(shape, normalized):
    import torch

    x = make_tensor(shape, "float32")
    assert_parity(lambda lib, x: lib.nn.functional.layer_norm(x, normalized), x)
    mean, rstd = ember.ops.norm.layer_norm_stats(ember.tensor(x), normalized_ndim=len(normalized), eps=1e-5)
    _, torch_mean, torch_rstd = torch.ops.aten.native_layer_norm(torch.from_numpy(x), list(normalized), None, None,
                                                                 1e-5)
    np.testing.assert_array_equal(mean.numpy(), torch_mean.numpy())
    np.testing.assert_array_equal(rstd.numpy(), torch_rstd.numpy())
