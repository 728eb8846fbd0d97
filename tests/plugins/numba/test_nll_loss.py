"""The compiled nll_loss kernels of ember-numba against torch and against ember-loss's
NumPy kernels on the same arrays: every reduction, with and without class weights and
ignored targets, float32 and float64, odd shapes, spatial targets ((N, C, d1, ...)
inputs), torch's error for a target out of range, and the inputs that go back to the
NumPy kernel.

Tests for plugins/numba/src/ember_numba/nll_loss.py (PyTorch counterpart:
aten/src/ATen/native/LossNLL.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor
from ember_loss import nll as ops
from ember_loss.nll import nll_loss
from ember_numba import nll_loss as compiled
from ember_numba.ahead_of_time import code
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
SHAPES = [(128, 10), (1, 1), (7, 3), (33, 1000)]
# spatial: a segmentation map, 3-d, 5-d, one position
SPATIAL_SHAPES = [(4, 21, 13, 17), (3, 5, 7), (2, 4, 3, 2, 5), (1, 1, 1)]
REDUCTIONS = ["mean", "sum", "none"]


def compiled_forward(*args, **kwargs):
    """ember-numba's ``nll_loss``, falling back to the op's NumPy kernel, as installed."""
    return compiled.nll_loss(ops.nll_loss_op.generic, *args, **kwargs)


def compiled_backward(*args, **kwargs):
    """ember-numba's ``nll_loss_backward``, falling back to the op's NumPy kernel, as installed."""
    return compiled.nll_loss_backward(ops.nll_backward_op.generic, *args, **kwargs)


def targets(shape, ignored):
    t = np.random.default_rng(shape[0]).integers(0, shape[1], size=shape[:1] + shape[2:])
    if ignored and t.size > 2:
        t.reshape(-1)[::3] = -100
    return t


def test_the_cpu_kernels_are_the_compiled_ones():
    ember.nn.functional.nll_loss  # builds the catalogues, which runs ember-numba's hook
    assert ops.nll_loss_op.kernel_for("cpu").__wrapped__ is compiled.nll_loss
    assert ops.nll_backward_op.kernel_for("cpu").__wrapped__ is compiled.nll_loss_backward


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES + SPATIAL_SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("weighted", "ignored"), [(False, False), (True, False), (False, True), (True, True)])
def test_values_and_gradients_match_torch_and_the_numpy_kernels(monkeypatch, dtype, shape, reduction, weighted,
                                                                 ignored):
    x = make_tensor(shape, dtype, seed=0)
    t = targets(shape, ignored)
    w = np.random.default_rng(1).uniform(0.1, 2.0, shape[1]).astype(dtype) if weighted else None
    tol = TOLERANCES[dtype]

    def loss(lib, x):
        return lib.nn.functional.nll_loss(x, lib.tensor(t), weight=None if w is None else lib.tensor(w),
                                          reduction=reduction)

    attrs = dict(reduction=reduction, ignore_index=-100)
    expected = ops.nll_loss_op.generic(np, x, t, w, **attrs)
    g = make_tensor(np.shape(expected), dtype, seed=2)
    expected_grad = ops.nll_backward_op.generic(np, g, x, t, w, **attrs)
    monkeypatch.setattr(ops.nll_loss_op, "generic", no_fallback)
    monkeypatch.setattr(ops.nll_backward_op, "generic", no_fallback)
    assert_parity(loss, x, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])
    actual = compiled_forward(np, x, t, w, **attrs)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype and np.shape(actual) == np.shape(expected)
    np.testing.assert_allclose(actual, expected, **tol)
    np.testing.assert_allclose(compiled_backward(np, g, x, t, w, **attrs), expected_grad, **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("spatial", [False, True])
def test_every_target_ignored_or_weighted_zero_gives_torchs_nan_and_zeros(reduction, spatial):
    x = make_tensor((4, 3, 2, 2) if spatial else (4, 3), "float32", seed=3)
    zeros_and_ones = np.array([0, 1, 0, 1]).reshape((4, 1, 1) if spatial else 4) * np.ones(x.shape[2:], np.int64)
    for t, w in [(np.full(zeros_and_ones.shape, -100), None), (zeros_and_ones, np.float32([0, 0, 1]))]:
        results = []
        for lib in (ember, torch):
            logits = lib.tensor(x, requires_grad=True)
            out = lib.nn.functional.nll_loss(logits, lib.tensor(t), weight=None if w is None else lib.tensor(w),
                                             reduction=reduction)
            out.sum().backward()
            results.append((out.detach().numpy(), logits.grad.numpy()))
        for ours, theirs in zip(*results):  # NaN where torch has NaN
            np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_a_target_out_of_range_raises_torchs_error():
    x = ember.tensor(make_tensor((3, 4), "float32", seed=4), requires_grad=True)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        nll_loss(x, ember.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        nll_loss(x, ember.tensor([0, -1, 1]))
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.nll_loss(torch.zeros(3, 4), torch.tensor([0, 4, 1]))
    assert "Target 4 is out of bounds." in str(theirs.value)
    spatial = np.zeros((2, 3, 3), np.int64)
    spatial[1, 2, 0] = 4
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        nll_loss(ember.tensor(make_tensor((2, 4, 3, 3), "float32", seed=4)), ember.tensor(spatial))
    assert not compiled.loops.spatial_backward(np.ones((1, 1), np.float32), spatial.reshape(2, 9),
                                               np.ones(1, np.float32), False, -100, True,
                                               np.zeros((2, 4, 9), np.float32))


def test_inputs_it_does_not_take_go_to_the_numpy_kernel(monkeypatch):
    calls = []
    for op in (ops.nll_loss_op, ops.nll_backward_op):
        generic = op.generic
        monkeypatch.setattr(op, "generic", lambda *a, generic=generic, **k: calls.append(a) or generic(*a, **k))
    x = make_tensor((4, 6), "float32", seed=5)
    t = np.array([0, 5, 2, 1])
    spatial = make_tensor((2, 6, 3, 4), "float32", seed=6)
    # float16, a transposed input, a 1-d input, a uint8 target, an empty batch; spatial:
    # a strided target, a channels-last input, an empty map
    for a, target in [(x.astype(np.float16), t), (x.T.copy().T, t), (x[0].copy(), t[:1].reshape(())),
                      (x, t.astype(np.uint8)), (x[:0], t[:0]),
                      (spatial, np.zeros((2, 3, 8), np.int64)[..., ::2]),
                      (spatial.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2), np.zeros((2, 3, 4), np.int64)),
                      (spatial[:, :, :0], np.zeros((2, 0, 4), np.int64))]:
        compiled_forward(np, a, target, None)
        assert calls[-1][1] is a
        compiled_backward(np, np.asarray(1.0, a.dtype), a, target, None)
        assert calls[-1][2] is a
    assert len(calls) == 16


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_spatial_exports_compute_what_the_jit_computes(dtype):
    rng = np.random.default_rng(7)
    x, t = rng.standard_normal((3, 9, 70)).astype(dtype), rng.integers(0, 9, (3, 70))
    t[1, 5] = -100
    w = (rng.random(9) + 0.5).astype(dtype)
    cases = [(compiled.loops.spatial_forward, (5, 6),
              lambda: (x, t, w, True, -100, np.empty((3, 70), dtype), np.empty(1, dtype))),
             (compiled.loops.spatial_backward, (6,),
              lambda: (np.full((1, 1), 0.5, dtype), t, w, True, -100, True, np.zeros_like(x)))]
    for loop, results, make_args in cases:
        exported = make_args()
        jitted = [a.copy() if isinstance(a, np.ndarray) else a for a in exported]
        assert loop.resolve(tuple(map(code, exported)))(*exported) == loop.jit()(*jitted)
        assert_same_bits([exported[i] for i in results], [jitted[i] for i in results])
