"""The compiled log_softmax kernels of ember-numba against torch and against core's
NumPy kernels on the same arrays: values and gradients, float32 and float64, odd row
lengths, rows far from zero, NaN and infinity, along the last dim and along others
((N, C, H, W) along C, (N, C) along N), and the inputs that go back to the NumPy
kernel.

Tests for plugins/numba/src/ember_numba/log_softmax.py (PyTorch counterpart:
aten/src/ATen/native/cpu/SoftMaxKernel.cpp, v2.13).
"""


import numpy as np
import pytest
import torch

import ember
from ember.native import softmax as core
from ember.testing import assert_parity, make_tensor
from ember_numba import log_softmax as compiled
from ember_numba.ahead_of_time import code
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
# the composite cross-entropy's logits, one value per row, a single row, rows not a
# multiple of eight, a 1-d input and a 3-d one along its last dim
SHAPES = [(128, 10), (32, 1000), (5, 1), (1, 37), (7, 13), (3, 257), (9,), (2, 3, 17)]


def test_the_cpu_kernels_are_the_compiled_ones():
    ember.nn.functional.log_softmax  # builds the catalogues, which runs ember-numba's hook
    assert core.LOG_SOFTMAX.kernel_for("cpu") is compiled.log_softmax
    assert core.LOG_SOFTMAX_BACKWARD.kernel_for("cpu") is compiled.log_softmax_backward


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_values_and_gradients_match_torch(dtype, shape):
    x = make_tensor(shape, dtype, seed=0) * 3
    tol = TOLERANCES[dtype]
    assert_parity(lambda lib, x: lib.nn.functional.log_softmax(x, -1), x, **tol, grad_rtol=tol["rtol"],
                  grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", [(shape, len(shape) - 1) for shape in SHAPES])
def test_each_kernel_matches_the_numpy_kernel(dtype, shape, dim):
    x, g = make_tensor(shape, dtype, seed=1) * 3, make_tensor(shape, dtype, seed=2)
    expected, actual = core.LOG_SOFTMAX.generic(np, x, dim), compiled.log_softmax(np, x, dim)
    assert actual.dtype == expected.dtype and actual.strides == expected.strides
    np.testing.assert_allclose(actual, expected, **TOLERANCES[dtype])
    expected = core.LOG_SOFTMAX_BACKWARD.generic(np, g, expected, dim)
    actual = compiled.log_softmax_backward(np, g, actual, dim)
    assert actual.dtype == expected.dtype and actual.strides == expected.strides
    np.testing.assert_allclose(actual, expected, **TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_far_from_zero_and_confident_rows_keep_their_digits(dtype):
    # rows around 1e4 (exp of them overflows: the max comes off first; adding it back
    # rounds at its magnitude, NOTE [ The output in torch's order ]) and a row where one
    # logit dominates: its log-probability, about -2e-3, keeps the relative digits that
    # torch's kernel keeps in the same dtype
    x = np.concatenate([1e4 + make_tensor((3, 50), "float64", seed=3),
                        np.array([[0.0] + [-10.0] * 49])]).astype(dtype)
    reference = torch.log_softmax(torch.from_numpy(x.astype(np.float64)), 1).numpy()
    np.testing.assert_allclose(compiled.log_softmax(np, x, 1), reference, rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-5 if dtype == "float32" else 1e-11)
    same_dtype = torch.log_softmax(torch.from_numpy(x), 1).numpy()
    assert abs(compiled.log_softmax(np, x, 1)[3, 0] / same_dtype[3, 0] - 1) < 1e-6


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_infinity_propagate_as_in_torch(dtype):
    x = make_tensor((6, 12), dtype, seed=4)
    x[1, 3] = np.nan
    x[2, 5] = np.inf
    x[3, 0] = -np.inf
    x[4, :] = -np.inf
    x[5, 7] = -np.nan  # a NaN with its sign bit set (NOTE [ A row max that vectorizes ])
    assert_special_values_match_torch(x, 1, dtype)


def assert_special_values_match_torch(x, dim, dtype):
    """Values and gradients of ``x`` (NaN, infinities) along ``dim``: NaN where torch has
    NaN, and -inf where it has -inf."""
    with np.errstate(invalid="ignore"):
        expected = torch.log_softmax(torch.from_numpy(x), dim).numpy()
        actual = compiled.log_softmax(np, x, dim)
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        np.testing.assert_allclose(actual, expected, **TOLERANCES[dtype])
        g = make_tensor(x.shape, dtype, seed=5)
        expected_grad = torch.ops.aten._log_softmax_backward_data(torch.from_numpy(g), torch.from_numpy(expected), dim,
                                                                  torch.from_numpy(x).dtype).numpy()
        np.testing.assert_allclose(compiled.log_softmax_backward(np, g, actual, dim), expected_grad,
                                   **TOLERANCES[dtype])


def test_inputs_it_does_not_take_go_to_the_numpy_kernel(monkeypatch):
    calls = []
    for op in (core.LOG_SOFTMAX, core.LOG_SOFTMAX_BACKWARD):
        generic = op.generic
        monkeypatch.setattr(op, "generic", lambda *a, generic=generic, **k: calls.append(a) or generic(*a, **k))
    x = make_tensor((4, 6), "float32", seed=6)
    # float16, a transposed array along either dim, an empty array, a 0-d one
    for a, dim in [(x.astype(np.float16), 1), (x.T, 1), (x.T, 0), (x[:0], 1), (x[0, 0].copy(), 0)]:
        compiled.log_softmax(np, a, dim)
        assert calls[-1][1] is a
        compiled.log_softmax_backward(np, a, a, dim)
        assert calls[-1][1] is a
    assert len(calls) == 10
    compiled.log_softmax_backward(np, x, x.astype(np.float64), 1)  # mixed dtypes
    assert len(calls) == 11


# --- along a dim that is not the last ------------------------------------------------

# (shape, dim): segmentation-style maps along C, (N, C) logits along N, a 3-d input along
# its first dim, a middle dim, one class, a dim of 1 followed by 1s (the row loops), and
# one whose inner positions the loops take in several blocks (64, 64 and 22 of 150)
COLUMNS = [((4, 21, 13, 17), 1), ((32, 10), 0), ((3, 5, 7), 0), ((2, 3, 4, 5), 2), ((6, 1, 9), 1), ((3, 7, 1), 1),
           ((2, 1100, 150), 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", COLUMNS)
def test_other_dims_match_torch_with_gradients(monkeypatch, dtype, shape, dim):
    monkeypatch.setattr(core.LOG_SOFTMAX, "generic", no_fallback)
    monkeypatch.setattr(core.LOG_SOFTMAX_BACKWARD, "generic", no_fallback)
    tol = TOLERANCES[dtype]
    assert_parity(lambda lib, x: lib.nn.functional.log_softmax(x, dim), make_tensor(shape, dtype, seed=7) * 3, **tol,
                  grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", COLUMNS)
def test_other_dims_match_the_numpy_kernel(dtype, shape, dim):
    test_each_kernel_matches_the_numpy_kernel(dtype, shape, dim)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_other_dims_keep_nan_infinity_and_large_logits_as_torch(dtype):
    # along C of (2, 6, 3, 5): a NaN, +inf, -inf in one column, a column all -inf, a
    # column near 1e4 (the max comes off before exp) and one NaN with its sign bit set
    x = make_tensor((2, 6, 3, 5), dtype, seed=10)
    x[0, 2, 0, 0] = np.nan
    x[0, 4, 1, 1] = np.inf
    x[1, 0, 2, 2] = -np.inf
    x[1, :, 0, 3] = -np.inf
    x[1, :, 1, 4] += 1e4
    x[0, 5, 2, 4] = -np.nan
    assert_special_values_match_torch(x, 1, dtype)


def test_other_dims_not_taken_go_to_the_numpy_kernel(monkeypatch):
    calls = []
    for op in (core.LOG_SOFTMAX, core.LOG_SOFTMAX_BACKWARD):
        generic = op.generic
        monkeypatch.setattr(op, "generic", lambda *a, generic=generic, **k: calls.append(a) or generic(*a, **k))
    x = make_tensor((4, 6, 5), "float32", seed=12)
    # channels-last-like strides, a sliced view, float16, an empty array
    for a in (x.transpose(0, 2, 1), x[:, :, ::2], x.astype(np.float16), x[:, :, :0]):
        expected = core.LOG_SOFTMAX.generic(np, a, 1)
        assert_same_bits([compiled.log_softmax(np, a, 1)], [expected])
        assert calls[-1][1] is a
        compiled.log_softmax_backward(np, a, a, 1)
        assert calls[-1][1] is a
    compiled.log_softmax_backward(np, x, x.astype(np.float64), 1)  # mixed dtypes
    assert len(calls) == 4 * 3 + 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_column_exports_compute_what_the_jit_computes(dtype):
    x = (np.random.default_rng(13).standard_normal((3, 9, 70)) * 5).astype(dtype)
    g = np.random.default_rng(14).standard_normal(x.shape).astype(dtype)
    cases = [(compiled.loops.forward_columns, 1, lambda: (x, np.empty_like(x), np.empty(64, dtype),
                                                           np.empty(64, dtype), 64)),
             (compiled.loops.backward_columns, 2, lambda: (g, x, np.empty_like(x), np.empty(64, dtype), 64))]
    for loop, result, make_args in cases:
        exported, jitted = make_args(), make_args()
        loop.resolve(tuple(map(code, exported)))(*exported)
        loop.jit()(*jitted)
        assert_same_bits([exported[result]], [jitted[result]])
