"""Compiled CPU kernels for ember-loss's ``loss::nll_loss`` and ``loss::nll_loss_backward``
on ``(N, C)`` log-probabilities: one loop over the targets.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``nll_loss_out_frame``,
``nll_loss_backward_out_frame``) (v2.13).

The NumPy kernels (ember_loss/nll.py) check the targets, gather, sum and scale in about
eight NumPy calls forward and six backward, which on the ``(128, 10)`` logits of the
composite ``nll_loss(log_softmax(x))`` cost about 16 us each against a few hundred
nanoseconds of arithmetic. The loops below do it in one call each, as torch's frames do:
forward, each target's ``-w[t] * x[n, t]`` and the sums of losses and weights; backward,
zeros with ``-w[t] * grad / denominator`` at each target. They serve C-contiguous
float32 and float64 ``(N, C)`` inputs with int64 class indices (and a weight of the
input's dtype, if any); everything else, and any target out of range (so that the
NumPy kernel raises torch's IndexError), goes to the NumPy kernels.
"""

import numpy as np

from ember_loss import nll as ops
from ember_numba.ahead_of_time import Loops
from ember_numba.arrays import compilable

loops = Loops("ember_numba.nll_loss_loops")


def overrides():
    """``[(op, cpu kernel)]``: ember-loss's nll_loss forward and backward ops on the cpu."""
    return [(ops.nll_loss_op, nll_loss), (ops.nll_backward_op, nll_loss_backward)]


def _takes(x, target, weight):
    return (x.ndim == 2 and compilable(x, weight) and target.dtype == np.int64 and target.ndim == 1
            and target.flags.c_contiguous)


def _weights(x, weight):
    """The weight array the loops read, and whether it is real (else one unused entry)."""
    return (weight, True) if weight is not None else (_NO_WEIGHT[x.dtype], False)


_NO_WEIGHT = {np.dtype(t): np.ones(1, t) for t in (np.float32, np.float64)}  # read, never written


def nll_loss(xp, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``loss::nll_loss`` on the cpu: ``-w[t] * x[t]`` per row, then reduced."""
    if not _takes(x, target, weight):
        return ops.nll_loss_op.generic(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    losses = np.empty(x.shape[0], x.dtype)
    w, weighted = _weights(x, weight)
    sums = np.empty(2, x.dtype)  # the sum of the losses and of the weights
    if not loops.forward(x, target, w, weighted, ignore_index, losses, sums):
        return ops.nll_loss_op.generic(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return sums[0].copy()
    if sums[1] == 0:  # 0 / 0 = nan when every target is ignored, as in torch
        return np.asarray(np.nan, x.dtype)
    return sums[0] / sums[1]


def nll_loss_backward(xp, grad, x, target, weight, *, reduction="mean", ignore_index=-100):
    """``loss::nll_loss_backward`` on the cpu: zeros, with ``-w[t] * grad`` (over the
    mean's denominator) at each row's target."""
    if not (_takes(x, target, weight) and grad.dtype == x.dtype):
        return ops.nll_backward_op.generic(xp, grad, x, target, weight, reduction=reduction,
                                           ignore_index=ignore_index)
    w, weighted = _weights(x, weight)
    out = np.zeros(x.shape, x.dtype)
    grads = grad.reshape(-1) if reduction == "none" else grad.reshape(1)
    if not loops.backward(grads, target, w, weighted, ignore_index, reduction == "mean", out):
        return ops.nll_backward_op.generic(xp, grad, x, target, weight, reduction=reduction,
                                           ignore_index=ignore_index)
    return out
