"""The 2-d class-index kernels of cross-entropy (row sums as matrix-vector products, the
backward folded into one per-row factor, the forward's exponentials kept for backward as
saved outputs of its node: NOTE [ The forward's exponentials, kept for backward ]) against torch: values and
gradients in float32 and float64, every reduction, class weights, ignore_index,
non-contiguous logits, an empty batch, and graphs whose backward runs after another
cross-entropy call or twice.

Tests for plugins/loss/src/ember_loss/cross_entropy.py (PyTorch counterpart:
aten/src/ATen/native/LossNLL.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close, assert_parity, make_tensor

TOLERANCES = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def labels(n, classes, seed=1, ignored=()):
    t = np.random.default_rng(seed).integers(0, classes, size=n)
    t[list(ignored)] = -100
    return t


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_matches_torch(dtype, reduction, weighted, noncontiguous):
    x, t = make_tensor((32, 1000), dtype), labels(32, 1000, ignored=(3, 7))
    w = make_tensor((1000,), dtype, low=0.1, high=2.0, seed=2)

    def fn(lib, x, w):
        return lib.nn.functional.cross_entropy(x, lib.tensor(t), w if weighted else None, reduction=reduction)
    tol = TOLERANCES[dtype]
    assert_parity(fn, x, w, noncontiguous=noncontiguous, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


def test_empty_batch_matches_torch():
    x = make_tensor((0, 5), "float32")
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(np.zeros(0, dtype=np.int64)),
                                                                 reduction="sum"), x)


def test_every_target_ignored_matches_torch():
    x = make_tensor((4, 6), "float64")
    t = np.full(4, -100)
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(t)), x)


def both(x_values, t_values):
    ex, tx = ember.tensor(x_values, requires_grad=True), torch.tensor(x_values, requires_grad=True)
    return (ex, ember.tensor(t_values)), (tx, torch.tensor(t_values))


def test_backward_after_another_call_uses_its_own_logits():
    first, second = make_tensor((8, 10), "float64", seed=3), make_tensor((8, 10), "float64", seed=4)
    t = labels(8, 10)
    (e1, et), (t1, tt) = both(first, t)
    (e2, _), (t2, _) = both(second, t)
    e_loss, t_loss = ember.nn.functional.cross_entropy(e1, et), torch.nn.functional.cross_entropy(t1, tt)
    ember.nn.functional.cross_entropy(e2, et).backward()  # each node keeps its own exponentials
    torch.nn.functional.cross_entropy(t2, tt).backward()
    e_loss.backward()
    t_loss.backward()
    assert_close(e1.grad, t1.grad)
    assert_close(e2.grad, t2.grad)


@pytest.mark.parametrize("soft", [False, True])
def test_the_backward_takes_the_forwards_exponentials_from_its_node(monkeypatch, soft):
    from ember_loss import cross_entropy_rows as module

    x = make_tensor((8, 10), "float64", seed=19)
    t = make_tensor((8, 10), "float64", seed=20) ** 2 if soft else labels(8, 10)
    ember.plugins.list_plugins()  # discovery first: ``without`` takes out a plugin it knows
    with ember.plugins.registry.without("numba"):  # the NumPy kernels, which keep them
        (ex, et), (tx, tt) = both(x, t)
        loss = ember.nn.functional.cross_entropy(ex, et)
        saved = loss.grad_fn.saved_outputs  # the loss, then what the forward kept
        assert len(saved) == (3 if soft else 4) and saved[1].shape == (8, 10) and saved[2].shape == (8,)
        computed = []
        original = module._shifted_exp
        monkeypatch.setattr(module, "_shifted_exp", lambda *args: computed.append(1) or original(*args))
        loss.backward()
    assert computed == []  # not computed again
    torch.nn.functional.cross_entropy(tx, tt).backward()
    assert_close(ex.grad, tx.grad)


def test_retained_graph_backward_twice_accumulates_like_torch():
    x, t = make_tensor((8, 10), "float32", seed=5), labels(8, 10)
    (ex, et), (tx, tt) = both(x, t)
    e_loss, t_loss = ember.nn.functional.cross_entropy(ex, et), torch.nn.functional.cross_entropy(tx, tt)
    for _ in range(2):
        e_loss.backward(retain_graph=True)
        t_loss.backward(retain_graph=True)
    assert_close(ex.grad, tx.grad)


def test_logits_changed_in_place_after_forward_raise():
    # The saved logits are checked as every saved input is. torch differs here (it saves log_softmax's
    # output, not the logits, so its backward runs on the values before the change).
    x, t = make_tensor((4, 5), "float32", seed=6), labels(4, 5)
    leaf = ember.tensor(x, requires_grad=True)
    logits = leaf * 1.0
    loss = ember.nn.functional.cross_entropy(logits, ember.tensor(t))
    with ember.no_grad():
        logits.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()



@pytest.mark.parametrize("target", ["plain", "smoothed", "probabilities"])
def test_the_loss_changed_in_place_after_forward_still_backpropagates_like_torch(target):
    # The node keeps the softmax's parts after the loss (NOTE [ The forward's exponentials,
    # kept for backward ]); the loss itself is not read by the backward, so, as in torch, it
    # may change in place before backward (label smoothing and probabilities take ember-loss's
    # NumPy kernels, which keep those parts, also where ember-numba is loaded)
    x = make_tensor((6, 5), "float32", seed=7)
    t = make_tensor((6, 5), "float32", seed=8, low=0, high=1) if target == "probabilities" else labels(6, 5)
    smoothing = 0.1 if target == "smoothed" else 0.0
    (ex, et), (tx, tt) = both(x, t)
    for lib, logits, targets in ((ember, ex, et), (torch, tx, tt)):
        loss = lib.nn.functional.cross_entropy(logits, targets, label_smoothing=smoothing)
        loss.mul_(3.0)
        loss.backward()
    assert_close(ex.grad, tx.grad)


# --- the plain-rows path (NOTE [ The plain-rows fast path ]) --------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target_dtype", ["int64", "uint8"])
def test_plain_rows_match_torch(dtype, reduction, target_dtype):
    # Every index in range, no weight, nothing to ignore: the path without masks.
    x, t = make_tensor((128, 10), dtype, seed=7), labels(128, 10).astype(target_dtype)
    tol = TOLERANCES[dtype]
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(t), reduction=reduction), x,
                  **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


def test_plain_rows_match_the_general_kernel():
    # The same logits through the plain path and, with an ignore_index that no target
    # uses but that lies among the classes, through the general one.
    x, t = make_tensor((32, 1000), "float64", seed=8), labels(32, 1000)
    unused = int(np.setdiff1d(np.arange(1000), t)[0])
    results = []
    for ignore_index in (-100, unused):
        leaf = ember.tensor(x, requires_grad=True)
        loss = ember.nn.functional.cross_entropy(leaf, ember.tensor(t), ignore_index=ignore_index)
        loss.backward()
        results.append((loss.item(), leaf.grad.numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)


def test_ignore_index_among_the_classes_matches_torch():
    x, t = make_tensor((16, 5), "float32", seed=9), labels(16, 5)
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(t), ignore_index=int(t[0])), x,
                  rtol=1e-5, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-6)


@pytest.mark.parametrize("bad", [10, -1])
def test_out_of_range_target_raises_like_torch(bad):
    t = labels(4, 10)
    t[2] = bad
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        ember.nn.functional.cross_entropy(ember.tensor(make_tensor((4, 10), "float32")), ember.tensor(t))
    with pytest.raises(IndexError):
        torch.nn.functional.cross_entropy(torch.tensor(make_tensor((4, 10), "float32")), torch.tensor(t))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignored", [(), (3, 7)])
def test_label_smoothing_rows_match_torch(dtype, reduction, ignored):
    # 2-d logits, no weight: the row kernels with smoothing (a row mean of x in the
    # forward, one per-row shift in the backward).
    x, t = make_tensor((32, 1000), dtype, seed=10), labels(32, 1000, ignored=ignored)
    tol = TOLERANCES[dtype]

    def fn(lib, x):
        return lib.nn.functional.cross_entropy(x, lib.tensor(t), reduction=reduction, label_smoothing=0.2)
    assert_parity(fn, x, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


def test_label_smoothing_with_every_target_ignored_matches_torch():
    x = make_tensor((4, 6), "float64", seed=11)
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(np.full(4, -100)),
                                                                 label_smoothing=0.3), x)


def test_label_smoothing_rows_match_the_general_kernel():
    # The (N, C, 1) view of the same logits takes the general kernel.
    x, t = make_tensor((16, 7), "float64", seed=12), labels(16, 7, ignored=(2,))
    results = []
    for view in (lambda a: a, lambda a: a.unsqueeze(-1)):
        leaf = ember.tensor(x, requires_grad=True)
        target = ember.tensor(t) if view(leaf).ndim == 2 else ember.tensor(t[:, None])
        loss = ember.nn.functional.cross_entropy(view(leaf), target, label_smoothing=0.25)
        loss.backward()
        results.append((loss.item(), leaf.grad.numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_probability_rows_match_torch(dtype, reduction, smoothing):
    # 2-d logits and class probabilities, no weight: BLAS row sums and dot products.
    x = make_tensor((32, 100), dtype, seed=13)
    q = np.random.default_rng(14).random((32, 100)).astype(dtype)
    q /= q.sum(axis=1, keepdims=True)
    tol = TOLERANCES[dtype]

    def fn(lib, x, q):
        return lib.nn.functional.cross_entropy(x, q, reduction=reduction, label_smoothing=smoothing)
    assert_parity(fn, x, q, **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


def confident_logits():
    x = (26.0 + 0.1 * make_tensor((8, 1000), "float64", seed=15)).astype("float32")
    t = labels(8, 1000)
    x[np.arange(8), t] = 40.0
    return x, t


@pytest.mark.parametrize("soft", [False, True])
def test_confident_rows_keep_their_small_losses(soft):
    # Logits near 40 with the target 14 above the rest: losses near 1e-3, which adding
    # the max back before subtracting the target logit would round to multiples of 4e-6.
    # The values are checked against torch in float64: torch's float32 kernel is 1.1e-6
    # off on two of these rows (a float32 sum of 1 and 999 terms of 8e-7), as is the
    # NumPy kernel's BLAS sum; ember-numba's float64 sum is within 1e-10 (NOTE [ A
    # confident row's loss, summed in float64 ] in ember_numba/log_softmax_loops.py).
    x, t = confident_logits()
    target = np.eye(1000, dtype="float32")[t] if soft else t
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(target), reduction="none"), x,
                  rtol=1e-5, atol=1.5e-6, grad_rtol=1e-5, grad_atol=5e-7)
    losses = ember.nn.functional.cross_entropy(ember.tensor(x), ember.tensor(target), reduction="none")
    exact = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=torch.float64),
                                              torch.tensor(target, dtype=torch.float64) if soft else torch.tensor(t),
                                              reduction="none")
    np.testing.assert_allclose(losses.numpy(), exact.numpy(), rtol=1e-5, atol=1.5e-6)


def test_confident_spatial_rows_keep_their_small_losses():
    # The N-d kernel on (N, C, 1) logits, against torch in float64 (torch's own float32
    # kernel for a non-last class dim is off by 2e-6 here).
    x, t = confident_logits()
    losses = ember.nn.functional.cross_entropy(ember.tensor(x[:, :, None]), ember.tensor(t[:, None]),
                                               reduction="none")
    exact = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=torch.float64), torch.tensor(t),
                                              reduction="none")
    np.testing.assert_allclose(losses.numpy().ravel(), exact.numpy(), rtol=1e-5, atol=5e-7)


# --- the shift by the target logit (NOTE [ Shifting by the target logit ]) -----------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_logits_far_above_the_target_fall_back_to_the_max_shift(dtype, reduction, smoothing):
    # One row's target logit is 800 below another logit of its row: exp(x - x[t])
    # overflows in both dtypes, and the batch is recomputed with the row maxima.
    x, t = make_tensor((6, 9), dtype, seed=16), labels(6, 9)
    x[2, t[2]] = -400.0
    x[2, (t[2] + 1) % 9] = 400.0
    tol = TOLERANCES[dtype]
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(t), reduction=reduction,
                                                                 label_smoothing=smoothing), x,
                  **tol, grad_rtol=tol["rtol"], grad_atol=tol["atol"])


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_logits_match_torch(value):
    x, t = make_tensor((4, 5), "float32", seed=17), labels(4, 5)
    x[1, t[1]] = value
    x[3, (t[3] + 2) % 5] = value
    assert_parity(lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor(t), reduction="none"), x)


def test_backward_with_another_target_on_the_same_logits():
    # Each call's node keeps the target positions of its own target.
    x = make_tensor((8, 10), "float64", seed=18)
    first, second = labels(8, 10, seed=1), labels(8, 10, seed=2)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e_losses = [ember.nn.functional.cross_entropy(ex, ember.tensor(t)) for t in (first, second)]
    t_losses = [torch.nn.functional.cross_entropy(tx, torch.tensor(t)) for t in (first, second)]
    e_losses[0].backward()
    t_losses[0].backward()
    assert_close(ex.grad, tx.grad)
    e_losses[1].backward()
    t_losses[1].backward()
    assert_close(ex.grad, tx.grad)
