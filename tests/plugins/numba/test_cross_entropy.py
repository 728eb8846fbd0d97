"""The compiled fused cross-entropy kernels of ember-numba against torch and against
ember-loss's NumPy kernels on the same arrays: every reduction, ignored rows, float32
and float64, odd shapes, rows whose logits overflow the target shift, torch's error for
a target out of range, and the calls that go back to the NumPy kernels.

Tests for plugins/numba/src/ember_numba/cross_entropy.py (PyTorch counterpart:
aten/src/ATen/native/LossNLL.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor
from ember_loss import cross_entropy as ops
from ember_numba import cross_entropy as compiled

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
SHAPES = [(128, 10), (1, 1), (7, 3), (32, 1000)]


def logits(shape, dtype):
    x = make_tensor(shape, dtype, seed=0) * 3
    if shape[0] > 3:
        x[1, 0] = 200  # exp(x - x[t]) overflows: the row is shifted by its max instead
        x[2] += 1e4  # a row far from zero
    return x


def targets(shape, seed=1):
    return np.random.default_rng(seed).integers(0, shape[1], size=shape[0])


def test_the_cpu_kernels_are_the_compiled_ones():
    ember.nn.functional.cross_entropy  # builds the catalogues, which runs ember-numba's hook
    assert ops.cross_entropy_op.kernel_for("cpu") is compiled.cross_entropy
    assert ops.cross_entropy_backward_op.kernel_for("cpu") is compiled.cross_entropy_backward


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 0])
def test_values_and_gradients_match_torch_and_the_numpy_kernels(dtype, shape, reduction, ignore_index):
    x, t = logits(shape, dtype), targets(shape)
    tol = TOLERANCES[dtype]

    def loss(lib, x):
        return lib.nn.functional.cross_entropy(x, lib.tensor(t), reduction=reduction, ignore_index=ignore_index)

    assert_parity(loss, x, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])
    attrs = dict(reduction=reduction, ignore_index=ignore_index)
    expected = ops.cross_entropy_op.generic(np, x, t, None, **attrs)
    actual = compiled.cross_entropy(np, x, t, None, **attrs)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype and np.shape(actual) == np.shape(expected)
    np.testing.assert_allclose(actual, expected, **tol)
    g = make_tensor(np.shape(expected), dtype, seed=2)
    np.testing.assert_allclose(compiled.cross_entropy_backward(np, g, x, t, None, **attrs),
                               ops.cross_entropy_backward_op.generic(np, g, x, t, None, **attrs), **tol)


def test_a_confident_rows_small_loss_keeps_its_digits():
    # losses near 1e-3, a float32 sum of 1 and 999 terms near 8e-7: summed in float64
    # (NOTE [ A confident row's loss, summed in float64 ]), within 1e-9 of the exact loss
    x = np.full((8, 1000), 26.0, np.float32) + make_tensor((8, 1000), "float32", seed=6) * 0.1
    t = targets((8, 1000), seed=7)
    x[np.arange(8), t] = 40.0
    exact = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=torch.float64), torch.tensor(t),
                                              reduction="none").numpy()
    np.testing.assert_allclose(compiled.cross_entropy(np, x, t, None, reduction="none"), exact, rtol=1e-6, atol=1e-9)


def test_every_row_ignored_gives_torchs_nan_and_zero_gradient():
    x = make_tensor((4, 3), "float32", seed=3)
    results = []
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.cross_entropy(leaf, lib.tensor(np.zeros(4, np.int64)), ignore_index=0)
        out.backward()
        results.append((out.detach().numpy(), leaf.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs)
    assert np.isnan(results[0][0])


def test_a_target_out_of_range_raises_torchs_error():
    x = ember.tensor(make_tensor((3, 4), "float32", seed=4), requires_grad=True)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        ember.nn.functional.cross_entropy(x, ember.tensor([0, 4, 1]))
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.zeros(3, 4), torch.tensor([0, 4, 1]))
    assert "Target 4 is out of bounds." in str(theirs.value)
    assert not compiled.loops.cross_entropy_backward_rows(
        x.detach().numpy(), np.array([0, 4, 1]), -100, np.ones(1, np.float32), True, np.empty((3, 4), np.float32))


def test_calls_it_does_not_take_go_to_the_numpy_kernels(monkeypatch):
    calls = []
    for op in (ops.cross_entropy_op, ops.cross_entropy_backward_op):
        generic = op.generic
        monkeypatch.setattr(op, "generic", lambda *a, generic=generic, **k: calls.append(a) or generic(*a, **k))
    x, t = make_tensor((4, 6), "float32", seed=5), np.array([0, 5, 2, 1])
    w = np.ones(6, np.float32)
    g = np.asarray(1.0, np.float32)
    # float16, transposed logits, a 1-d input, uint8 targets, class weights, label
    # smoothing, class probabilities, an empty batch
    for a, target, weight, smoothing in [(x.astype(np.float16), t, None, 0.0), (x.T.copy().T, t, None, 0.0),
                                         (x[0].copy(), t[:1].reshape(()), None, 0.0),
                                         (x, t.astype(np.uint8), None, 0.0), (x, t, w, 0.0), (x, t, None, 0.1),
                                         (x, np.full((4, 6), 1 / 6, np.float32), None, 0.0), (x[:0], t[:0], None, 0.0)]:
        compiled.cross_entropy(np, a, target, weight, label_smoothing=smoothing)
        assert calls[-1][1] is a
        compiled.cross_entropy_backward(np, g.astype(a.dtype), a, target, weight, label_smoothing=smoothing)
        assert calls[-1][2] is a
    assert len(calls) == 16
