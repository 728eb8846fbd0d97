"""Compiled CPU kernels for ember-loss's fused ``loss::cross_entropy`` and
``loss::cross_entropy_backward`` with class indices: one loop per row of ``(N, C)``
logits, or per block of positions of ``(N, C, d1, ...)`` ones.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``cross_entropy_loss``) and
aten/src/ATen/native/cpu/SoftMaxKernel.cpp, registered through
aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``) (v2.13).

They serve C-contiguous float32 or float64 logits with C-contiguous int64 class
indices, with or without a class weight of the logits' dtype, and no label smoothing
(``ignore_index`` may match some positions); every other call (label smoothing, class
probabilities, other layouts and dtypes), and a target out of range (so that the NumPy
kernel raises torch's IndexError), goes to the kernels they replace (``fallback``:
ember-loss's NumPy kernels, ember_loss/cross_entropy.py). The row forward shifts each
row by its target's logit, as the NumPy kernel does (NOTE [ Shifting by the target
logit ] in ember_loss/cross_entropy_rows.py), with
ember_numba/vector_exp.py's exponential; the backward recomputes the row's
exponentials into its output and scales them in place, so nothing is kept between the
two. Spatial logits take the column loops (NOTE [ Class weights and spatial targets in
the fused loops ] in log_softmax_loops.py).
"""

import numpy as np

from ember_numba.arrays import compilable
from ember_numba.log_softmax import column_block, loops


def overrides():
    """``[(op name, cpu kernel)]``: ember-loss's fused cross-entropy forward and backward ops on the
    cpu, each kernel taking the one it replaces first (NOTE [ Kernels for another plugin's ops ] in
    ember/plugins/manager.py)."""
    return [("loss::cross_entropy", cross_entropy), ("loss::cross_entropy_backward", cross_entropy_backward)]


def _takes(x, target, weight, label_smoothing):
    """Which loops serve the call: ``"rows"`` ((N, C) logits, no weight), ``"weighted"``
    ((N, C) with a class weight), ``"columns"`` ((N, C, d1, ...) logits, (N, d1, ...)
    targets, with or without a weight), or None (the NumPy kernel)."""
    if not (label_smoothing <= 0 and x.ndim >= 2 and compilable(x, weight) and target.dtype == np.int64
            and target.flags.c_contiguous and target.shape == x.shape[:1] + x.shape[2:]):
        return None
    if x.ndim > 2:
        return "columns"
    return "rows" if weight is None else "weighted"


def _columns(x, target):
    """(N, C, L) logits, (N, L) targets and the block of positions the loops take."""
    lines = x.reshape(x.shape[0], x.shape[1], -1)
    return lines, target.reshape(x.shape[0], -1), column_block(lines)


def _weights(x, weight):
    """The weight array the loops read, and whether it is real (else one unused entry)."""
    return (weight, True) if weight is not None else (np.ones(1, x.dtype), False)


def cross_entropy(fallback, xp, x, target, weight, *, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``loss::cross_entropy`` on the cpu: ``-w[t] * log_softmax(x)[t]`` per position,
    reduced; ``(loss,)``: the loops keep nothing for the backward, which recomputes each
    row's exponentials (NOTE [ The forward's exponentials, kept for backward ] in
    ember_loss/cross_entropy.py)."""
    loops_for = _takes(x, target, weight, label_smoothing)
    if loops_for == "rows":
        losses = np.empty(x.shape[0], x.dtype)
        counted = loops.cross_entropy_rows(x, target, ignore_index, losses)
        if counted >= 0:
            return (_reduced(losses, reduction, counted),)
    elif loops_for is not None:
        sums = np.empty(1, x.dtype)  # the sum of the weights counted
        if loops_for == "weighted":
            losses = np.empty(x.shape[0], x.dtype)
            done = loops.weighted_cross_entropy_rows(x, target, weight, ignore_index, losses, sums)
        else:
            lines, targets, block = _columns(x, target)
            losses = np.empty(targets.shape, x.dtype)
            done = loops.cross_entropy_columns(lines, targets, *_weights(x, weight), ignore_index, losses, sums,
                                               *(np.empty(block, x.dtype) for _ in range(3)), block)
        if done:
            return (_reduced(losses.reshape(target.shape), reduction, sums[0]),)
    return fallback(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index,
                    label_smoothing=label_smoothing)


def _reduced(losses, reduction, denominator):
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    return total / denominator if denominator else np.asarray(np.nan, losses.dtype)  # all ignored: nan, as torch


def cross_entropy_backward(fallback, xp, grad, x, target, weight, exps=None, sums=None, positions=None, *,
                           reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``loss::cross_entropy_backward`` on the cpu: ``w[t] * grad * (softmax(x) -
    onehot(t))`` per position (over the sum of the ``w[t]`` counted, for the mean).
    ``exps``, ``sums`` and ``positions``, kept by the NumPy forward when it ran, are for
    the fallback."""
    loops_for = _takes(x, target, weight, label_smoothing) if grad.dtype == x.dtype else None
    mean = reduction == "mean"
    if loops_for is not None:
        out = np.empty_like(x)
        if loops_for == "rows":
            done = loops.cross_entropy_backward_rows(x, target, ignore_index, grad.reshape(-1), mean, out)
        elif loops_for == "weighted":
            done = loops.weighted_cross_entropy_backward_rows(x, target, weight, ignore_index, grad.reshape(-1), mean,
                                                              out)
        else:
            lines, targets, block = _columns(x, target)
            grads = grad.reshape(targets.shape) if reduction == "none" else grad.reshape(1, 1)
            done = loops.cross_entropy_backward_columns(lines, targets, *_weights(x, weight), ignore_index, grads, mean,
                                                        out.reshape(lines.shape), np.empty(block, x.dtype),
                                                        np.empty(block, x.dtype), block)
        if done:
            return out
    return fallback(xp, grad, x, target, weight, exps, sums, positions, reduction=reduction,
                    ignore_index=ignore_index, label_smoothing=label_smoothing)
