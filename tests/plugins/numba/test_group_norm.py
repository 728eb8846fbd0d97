"""The compiled group-norm kernels of ember-numba against torch and against
ember-norm's NumPy kernels on the same arrays: values and gradients of input, weight
and bias, float32 and float64, odd shapes, groups far from zero, NaN and infinity, and
the inputs that go back to the NumPy kernel.

Tests for plugins/numba/src/ember_numba/group_norm.py (PyTorch counterpart:
aten/src/ATen/native/cpu/group_norm_kernel.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor
from ember_norm.ops import group_norm as ops
from ember_norm.ops import layer_norm as stats_ops
from ember_numba import group_norm as compiled
from tests.plugins.numba.test_layer_norm import TOLERANCES, assert_same, numpy_and_compiled, numpy_kernel_calls

# (input shape, groups): 8 groups of 16x16 images, one group, one channel per group,
# no spatial dims, one sample, odd spatial sizes
CASES = [((32, 64, 16, 16), 8), ((2, 6, 5), 1), ((3, 4, 7, 3), 4), ((5, 6), 3), ((1, 10, 9), 5),
         ((2, 6, 3, 5, 7), 2)]


def group_norm(groups, affine=True):
    if affine:
        return lambda lib, x, w, b: lib.nn.functional.group_norm(x, groups, w, b)
    return lambda lib, x: lib.nn.functional.group_norm(x, groups)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, groups", CASES)
def test_affine_matches_torch(dtype, shape, groups):
    x = make_tensor(shape, dtype, seed=0)
    w, b = make_tensor(shape[1:2], dtype, seed=1), make_tensor(shape[1:2], dtype, seed=2)
    tol = TOLERANCES[dtype]
    assert_parity(group_norm(groups), x, w, b, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, groups", CASES[1:3] + CASES[4:5])
def test_without_affine_matches_torch(dtype, shape, groups):
    tol = TOLERANCES[dtype]
    assert_parity(group_norm(groups, affine=False), make_tensor(shape, dtype, seed=3), **tol,
                  grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, groups", CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_each_kernel_matches_the_numpy_kernel(dtype, shape, groups, affine):
    x, g = make_tensor(shape, dtype, seed=4), make_tensor(shape, dtype, seed=5)
    w, b = (make_tensor(shape[1:2], dtype, seed=6), make_tensor(shape[1:2], dtype, seed=7)) if affine else (None, None)
    mean, rstd = stats_ops.layer_norm_stats.generic(np, x.reshape(shape[0], groups, -1), normalized_ndim=1, eps=1e-5)
    expected, actual = numpy_and_compiled(ops.group_norm, compiled.group_norm, x, w, b, mean, rstd,
                                          num_groups=groups, eps=1e-5)
    assert_same([expected], [actual], dtype)
    expected, actual = numpy_and_compiled(ops.group_norm_backward, compiled.group_norm_backward, g, x, w, mean,
                                          rstd, num_groups=groups)
    assert_same(expected, actual, dtype)


def errors_against_float64_torch(lib, groups, x, w, b):
    """``lib`` (ember or torch) in float32 against torch in float64 on the same values:
    the largest errors of the output and of the input and weight gradients, each
    relative to the largest value."""
    grad = make_tensor(x.shape, "float32", seed=12)
    ours = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = lib.nn.functional.group_norm(ours[0], groups, ours[1], ours[2])
    out.backward(lib.tensor(grad))
    theirs = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x, w, b)]
    expected = torch.nn.functional.group_norm(theirs[0], groups, theirs[1], theirs[2])
    expected.backward(torch.tensor(grad.astype(np.float64)))
    pairs = [(out, expected)] + [(a.grad, t.grad) for a, t in zip(ours[:2], theirs[:2])]
    errors = []
    for actual, reference in pairs:
        actual, reference = actual.detach().numpy(), reference.detach().numpy()
        errors.append(np.abs(actual - reference).max() / max(1.0, np.abs(reference).max()))
    return errors


def test_groups_far_from_zero_as_close_to_float64_as_torch():
    # |mean| 1e4 times the spread: the backward's sums of g * (x - mean) stay centered,
    # where torch's float32 kernel (x-based) cancels.
    x = (1e3 + 1e-1 * make_tensor((4, 6, 20), "float64", seed=8)).astype(np.float32)
    w, b = make_tensor((6,), "float32", seed=1), make_tensor((6,), "float32", seed=2)
    ours, theirs = (errors_against_float64_torch(lib, 3, x, w, b) for lib in (ember, torch))
    assert all(e <= 1.5 * t for e, t in zip(ours, theirs)) and max(ours) < 1e-3


def test_two_values_per_group_as_close_to_float64_as_torch():
    # Two values per group: grad_input is a difference of nearly equal terms (rstd up
    # to ~300 here).
    x = make_tensor((5, 6), "float32", seed=3)
    w, b = np.ones(6, np.float32), np.zeros(6, np.float32)
    ours, theirs = (errors_against_float64_torch(lib, 3, x, w, b) for lib in (ember, torch))
    assert all(e <= 1.5 * t for e, t in zip(ours, theirs))


def test_noncontiguous_input_takes_the_numpy_kernel(monkeypatch):
    calls = [numpy_kernel_calls(monkeypatch, op) for op in (ops.group_norm, ops.group_norm_backward)]
    x = make_tensor((3, 4, 10), "float32", seed=10)
    w, b = make_tensor((4,), "float32", seed=1), make_tensor((4,), "float32", seed=2)
    assert_parity(group_norm(2), x, w, b, noncontiguous=True, **TOLERANCES["float32"])
    assert all(calls)


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 4, 0)])
def test_empty_inputs_match_torch(shape):
    x = make_tensor(shape, "float32")
    w, b = make_tensor((4,), "float32", seed=1), make_tensor((4,), "float32", seed=2)
    assert_parity(group_norm(2), x, w, b)
