"""The compiled fused cross-entropy kernels of ember-numba against torch and against
ember-loss's NumPy kernels on the same arrays: every reduction, ignored rows, float32
and float64, odd shapes, rows whose logits overflow the target shift, class weights,
spatial targets ((N, C, d1, ...) logits), torch's error for a target out of range, and
the calls that go back to the NumPy kernels.

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
from ember_numba.ahead_of_time import code
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
SHAPES = [(128, 10), (1, 1), (7, 3), (32, 1000)]


def compiled_forward(*args, **kwargs):
    """ember-numba's ``cross_entropy``, falling back to the op's NumPy kernel, as installed: its
    loss (the NumPy kernel may return, after it, what it keeps for the backward)."""
    return compiled.cross_entropy(ops.cross_entropy_op.generic, *args, **kwargs)[0]


def numpy_forward(*args, **kwargs):
    """ember-loss's NumPy kernel: its loss."""
    return ops.cross_entropy_op.generic(*args, **kwargs)[0]


def compiled_backward(*args, **kwargs):
    """ember-numba's ``cross_entropy_backward``, falling back to the op's NumPy kernel, as installed."""
    return compiled.cross_entropy_backward(ops.cross_entropy_backward_op.generic, *args, **kwargs)


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
    assert ops.cross_entropy_op.kernel_for("cpu").__wrapped__ is compiled.cross_entropy
    assert ops.cross_entropy_backward_op.kernel_for("cpu").__wrapped__ is compiled.cross_entropy_backward


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
    expected = numpy_forward(np, x, t, None, **attrs)
    actual = compiled_forward(np, x, t, None, **attrs)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype and np.shape(actual) == np.shape(expected)
    np.testing.assert_allclose(actual, expected, **tol)
    g = make_tensor(np.shape(expected), dtype, seed=2)
    np.testing.assert_allclose(compiled_backward(np, g, x, t, None, **attrs),
                               ops.cross_entropy_backward_op.generic(np, g, x, t, None, **attrs), **tol)


def test_a_confident_rows_small_loss_keeps_its_digits():
    # losses near 1e-3, a float32 sum of 1 and 999 terms near 8e-7: summed in float64
    # (NOTE [ A confident row's loss, summed in float64 ]), within 1e-9 of the exact loss
    x = np.full((8, 1000), 26.0, np.float32) + make_tensor((8, 1000), "float32", seed=6) * 0.1
    t = targets((8, 1000), seed=7)
    x[np.arange(8), t] = 40.0
    exact = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=torch.float64), torch.tensor(t),
                                              reduction="none").numpy()
    np.testing.assert_allclose(compiled_forward(np, x, t, None, reduction="none"), exact, rtol=1e-6, atol=1e-9)


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
    # float16, transposed logits, a 1-d input, uint8 targets, float64 class weights for
    # float32 logits, strided weights, label smoothing, class probabilities, an empty
    # batch, spatial targets in a strided view, spatial logits stored channels-last
    spatial, spatial_t = make_tensor((2, 6, 3, 4), "float32", seed=6), np.zeros((2, 3, 4), np.int64)
    for a, target, weight, smoothing in [(x.astype(np.float16), t, None, 0.0), (x.T.copy().T, t, None, 0.0),
                                         (x[0].copy(), t[:1].reshape(()), None, 0.0),
                                         (x, t.astype(np.uint8), None, 0.0), (x, t, w.astype(np.float64), 0.0),
                                         (x, t, np.ones(12, np.float32)[::2], 0.0), (x, t, None, 0.1),
                                         (x, np.full((4, 6), 1 / 6, np.float32), None, 0.0), (x[:0], t[:0], None, 0.0),
                                         (spatial, np.zeros((2, 3, 8), np.int64)[..., ::2], None, 0.0),
                                         (spatial.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2), spatial_t, w,
                                          0.0)]:
        compiled_forward(np, a, target, weight, label_smoothing=smoothing)
        assert calls[-1][1] is a
        compiled_backward(np, g.astype(a.dtype), a, target, weight, label_smoothing=smoothing)
        assert calls[-1][2] is a
    assert len(calls) == 22


# --- class weights and spatial targets ---------------------------------------------

# (N, C) rows with a weight; spatial maps: segmentation-like, 3-d, 5-d, one position, and
# one whose positions the column loops take in blocks (64, 64 and 22 of 150)
WEIGHTED_SHAPES = SHAPES + [(4, 21, 13, 17), (3, 5, 7), (2, 4, 3, 2, 5), (1, 1, 1), (2, 1100, 150)]


def spatial_targets(shape, seed=1, ignored=0):
    t = np.random.default_rng(seed).integers(0, shape[1], size=shape[:1] + shape[2:])
    t.reshape(-1)[::7] = ignored  # some positions take ignore_index's value
    return t


def class_weights(shape, dtype, seed=3):
    return (np.random.default_rng(seed).random(shape[1]) + 0.25).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, weighted", [(shape, weighted) for shape in WEIGHTED_SHAPES
                                             for weighted in (True, False)
                                             if weighted or len(shape) > 2])  # (N, C) unweighted: above
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weights_and_spatial_targets_match_torch_and_the_numpy_kernels(monkeypatch, dtype, shape, reduction, weighted):
    x, t = make_tensor(shape, dtype, seed=0) * 3, spatial_targets(shape)
    w = class_weights(shape, dtype) if weighted else None
    tol = TOLERANCES[dtype]
    attrs = dict(reduction=reduction, ignore_index=0)
    expected = numpy_forward(np, x, t, w, **attrs)
    g = make_tensor(np.shape(expected), dtype, seed=2)
    expected_grad = ops.cross_entropy_backward_op.generic(np, g, x, t, w, **attrs)
    monkeypatch.setattr(ops.cross_entropy_op, "generic", no_fallback)
    monkeypatch.setattr(ops.cross_entropy_backward_op, "generic", no_fallback)

    def loss(lib, x):
        weight = None if w is None else lib.tensor(w)
        return lib.nn.functional.cross_entropy(x, lib.tensor(t), weight=weight, **attrs)

    assert_parity(loss, x, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])
    actual = compiled_forward(np, x, t, w, **attrs)
    assert np.asarray(actual).dtype == np.asarray(expected).dtype and np.shape(actual) == np.shape(expected)
    np.testing.assert_allclose(actual, expected, **tol)
    np.testing.assert_allclose(compiled_backward(np, g, x, t, w, **attrs), expected_grad, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5), (2, 5, 3, 4)])
def test_nothing_counted_gives_torchs_results(dtype, shape):
    # every position ignored: nan, zero gradient; weights of the targets' classes all 0:
    # 0 / 0 = nan for the loss and the gradient
    x = make_tensor(shape, dtype, seed=7)
    zero_weight = np.ones(shape[1], dtype)
    zero_weight[:2] = 0
    t = spatial_targets(shape) % 2
    for target, weight, ignore_index in [(np.zeros_like(t), None, 0), (np.zeros_like(t), zero_weight, 1),
                                         (t, zero_weight, -100)]:
        results = []
        for lib in (ember, torch):
            leaf = lib.tensor(x, requires_grad=True)
            out = lib.nn.functional.cross_entropy(leaf, lib.tensor(target), ignore_index=ignore_index,
                                                  weight=None if weight is None else lib.tensor(weight))
            out.backward()
            results.append((out.detach().numpy(), leaf.grad.numpy()))
        for ours, theirs in zip(*results):
            np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
            np.testing.assert_allclose(ours, theirs, **TOLERANCES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_spatial_nan_infinity_and_overflowing_logits_match_torch(dtype):
    x = make_tensor((2, 6, 3, 5), dtype, seed=8) * 3
    x[0, 2, 0, 0] = np.nan
    x[0, 4, 1, 1] = np.inf
    x[1, 0, 2, 2] = -np.inf
    x[1, :, 1, 4] += 1e4
    x[1, 3, 0, 3] = 800
    t = spatial_targets(x.shape, seed=9, ignored=-100)
    t[0, 2, 2], x[0, 5, 2, 2] = -100, 800  # ignored, and 800 above the logit it is shifted by
    t[1, 0, 3] = 1  # the 800 above is 3: exp(x - x[t]) overflows, the max shift does not
    w = class_weights(x.shape, dtype)
    with np.errstate(invalid="ignore"):
        for reduction in ("none", "sum"):
            ours = compiled_forward(np, x, t, w, reduction=reduction)
            tx = torch.tensor(x, requires_grad=True)
            theirs = torch.nn.functional.cross_entropy(tx, torch.tensor(t), weight=torch.tensor(w), reduction=reduction)
            np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs.detach().numpy()))
            np.testing.assert_allclose(ours, theirs.detach().numpy(), **TOLERANCES[dtype])
            g = make_tensor(np.shape(ours), dtype, seed=10)
            theirs.backward(torch.tensor(g))
            ours_grad = compiled_backward(np, g, x, t, w, reduction=reduction)
            np.testing.assert_array_equal(np.isnan(ours_grad), np.isnan(tx.grad.numpy()))
            np.testing.assert_allclose(ours_grad, tx.grad.numpy(), **TOLERANCES[dtype])


def test_confident_and_tied_positions_keep_their_digits():
    # NOTE [ A confident position's loss ]: losses near 1e-3 (the target 14 above the
    # rest of 300 classes) within 1e-5 of the float64 loss, and positions whose logits
    # all tie (loss log(C), every term exactly 1) or tie in pairs
    x = make_tensor((2, 300, 4, 5), "float32", seed=13) * 0.1 + 26
    t = spatial_targets(x.shape, seed=14, ignored=5)
    x[np.arange(2)[:, None, None], t, np.arange(4)[None, :, None], np.arange(5)] = 40.0
    x[0, :, 1, 2] = 3.0
    x[1, :, 2, 3] = 3.0
    x[1, 7, 2, 3] = x[1, 8, 2, 3] = 9.0
    exact = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=torch.float64), torch.tensor(t),
                                              reduction="none").numpy()
    np.testing.assert_allclose(compiled_forward(np, x, t, None, reduction="none"), exact, rtol=1e-5, atol=1e-9)


def test_a_spatial_target_out_of_range_raises_torchs_error():
    x = make_tensor((2, 4, 3, 3), "float32", seed=11)
    t = np.zeros((2, 3, 3), np.int64)
    t[1, 2, 0] = 4
    for weight in (None, np.ones(4, np.float32)):
        with pytest.raises(IndexError, match="Target 4 is out of bounds."):
            ember.nn.functional.cross_entropy(ember.tensor(x), ember.tensor(t),
                                              weight=None if weight is None else ember.tensor(weight))
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t))
    assert "Target 4 is out of bounds." in str(theirs.value)
    lines, targets_, block = compiled._columns(x, t)
    assert not compiled.loops.cross_entropy_backward_columns(
        lines, targets_, np.ones(1, np.float32), False, -100, np.ones((1, 1), np.float32), True, np.empty_like(lines),
        np.empty(block, np.float32), np.empty(block, np.float32), block)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_weighted_and_spatial_exports_compute_what_the_jit_computes(dtype):
    rng = np.random.default_rng(12)
    rows, maps = (rng.standard_normal((9, 37)) * 4).astype(dtype), (rng.standard_normal((3, 9, 70)) * 4).astype(dtype)
    row_t, map_t = rng.integers(0, 37, 9), rng.integers(0, 9, (3, 70))
    row_t[2], map_t[1, 5] = -100, -100
    w, block = (rng.random(37) + 0.5).astype(dtype), 64
    loops = compiled.loops
    cases = [(loops.weighted_cross_entropy_rows, (4, 5),
              lambda: (rows, row_t, w, -100, np.empty(9, dtype), np.empty(1, dtype))),
             (loops.weighted_cross_entropy_backward_rows, (6,),
              lambda: (rows, row_t, w, -100, np.full(1, 0.5, dtype), True, np.empty_like(rows))),
             (loops.cross_entropy_columns, (5, 6),
              lambda: (maps, map_t, w[:9], True, -100, np.empty((3, 70), dtype), np.empty(1, dtype),
                       np.empty(block, dtype), np.empty(block, dtype), np.empty(block, dtype), block)),
             (loops.cross_entropy_backward_columns, (7,),
              lambda: (maps, map_t, w[:9], True, -100, rng.standard_normal((3, 70)).astype(dtype), False,
                       np.empty_like(maps), np.empty(block, dtype), np.empty(block, dtype), block))]
    for loop, results, make_args in cases:
        exported = make_args()
        jitted = [a.copy() if isinstance(a, np.ndarray) else a for a in exported]
        assert loop.resolve(tuple(map(code, exported)))(*exported) == loop.jit()(*jitted)
        assert_same_bits([exported[i] for i in results], [jitted[i] for i in results])
