"""Compiled CPU kernels for ember-loss's ``loss::nll_loss`` and ``loss::nll_loss_backward``
on ``(N, C)`` and ``(N, C, d1, ...)`` log-probabilities: one loop over the targets.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``nll_loss_out_frame``,
``nll_loss_backward_out_frame``) and LossNLL2d.cpp (``nll_loss2d_forward_out_frame``)
(v2.13).

The NumPy kernels (ember_loss/nll.py) check the targets, gather, sum and scale in about
eight NumPy calls forward and six backward, which on the ``(128, 10)`` logits of the
composite ``nll_loss(log_softmax(x))`` cost about 16 us each against a few hundred
nanoseconds of arithmetic. The loops below do it in one call each, as torch's frames do:
forward, each target's ``-w[t] * x[n, t]`` and the sums of losses and weights; backward,
zeros with ``-w[t] * grad / denominator`` at each target. They serve C-contiguous
float32 and float64 ``(N, C)`` and ``(N, C, d1, ...)`` inputs with C-contiguous int64
class indices (and a weight of the input's dtype, if any); everything else, and any
target out of range (so that the NumPy kernel raises torch's IndexError), goes to the
NumPy kernels. A spatial map's losses are summed by NumPy (pairwise), its weights in
float64 (nll_loss_loops.py).
"""

import numpy as np

from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.nll_loss_loops")


def overrides():
    """``[(op name, cpu kernel)]``: ember-loss's nll_loss forward and backward ops on the cpu, each
    kernel taking the one it replaces first (NOTE [ Kernels for another plugin's ops ] in
    ember/plugins/manager.py)."""
    return [("loss::nll_loss", nll_loss), ("loss::nll_loss_backward", nll_loss_backward)]


def _takes(x, target, weight):
    """Whether the loops serve the call: (N, C) or (N, C, d1, ...) contiguous inputs,
    int64 class indices of shape (N, d1, ...), a weight of the input's dtype or none."""
    return (x.ndim >= 2 and compilable(x, weight) and target.dtype == np.int64 and target.flags.c_contiguous
            and target.shape == x.shape[:1] + x.shape[2:])


def _spatial(x, target):
    """(N, C, L) input and (N, L) targets."""
    return x.reshape(x.shape[0], x.shape[1], -1), target.reshape(x.shape[0], -1)


def _weights(x, weight):
    """The weight array the loops read, and whether it is real (else one unused entry)."""
    return (weight, True) if weight is not None else (_NO_WEIGHT[x.dtype], False)


_NO_WEIGHT = {np.dtype(t): np.ones(1, t) for t in (np.float32, np.float64)}  # read, never written


def nll_loss(fallback, xp, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``loss::nll_loss`` on the cpu: ``-w[t] * x[t]`` per row, then reduced."""
    if not _takes(x, target, weight):
        return fallback(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    w, weighted = _weights(x, weight)
    if x.ndim > 2:
        return _spatial_loss(fallback, xp, x, target, weight, reduction, ignore_index)
    losses = np.empty(x.shape[0], x.dtype)
    sums = np.empty(2, x.dtype)  # the sum of the losses and of the weights
    if not loops.forward(x, target, w, weighted, ignore_index, losses, sums):
        return fallback(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    return _reduced(losses, reduction, sums[0], sums[1])


def _spatial_loss(fallback, xp, x, target, weight, reduction, ignore_index):
    lines, targets = _spatial(x, target)
    losses = np.empty(targets.shape, x.dtype)
    sums = np.empty(1, x.dtype)  # the sum of the weights counted
    if not loops.spatial_forward(lines, targets, *_weights(x, weight), ignore_index, losses, sums):
        return fallback(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    losses = losses.reshape(target.shape)
    return _reduced(losses, reduction, None if reduction == "none" else losses.sum(), sums[0])


def _reduced(losses, reduction, total, denominator):
    if reduction == "none":
        return losses
    if reduction == "sum":
        return total.copy()
    if denominator == 0:  # 0 / 0 = nan when every target is ignored, as in torch
        return np.asarray(np.nan, losses.dtype)
    return total / denominator


def nll_loss_backward(fallback, xp, grad, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``loss::nll_loss_backward`` on the cpu: zeros, with ``-w[t] * grad`` (over the
    mean's denominator) at each row's target."""
    if not (_takes(x, target, weight) and grad.dtype == x.dtype):
        return fallback(xp, grad, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    w, weighted = _weights(x, weight)
    out = np.zeros(x.shape, x.dtype)
    if x.ndim > 2:
        lines, targets = _spatial(x, target)
        grads = grad.reshape(targets.shape) if reduction == "none" else grad.reshape(1, 1)
        done = loops.spatial_backward(grads, targets, w, weighted, ignore_index, reduction == "mean",
                                      out.reshape(lines.shape))
    else:
        grads = grad.reshape(-1) if reduction == "none" else grad.reshape(1)
        done = loops.backward(grads, target, w, weighted, ignore_index, reduction == "mean", out)
    if not done:
        return fallback(xp, grad, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    return out
