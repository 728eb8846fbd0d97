"""Compiled CPU kernels for ember-loss's fused ``loss::cross_entropy`` and
``loss::cross_entropy_backward`` on ``(N, C)`` logits with class indices: one loop per
row.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``cross_entropy_loss``) and
aten/src/ATen/native/cpu/SoftMaxKernel.cpp, registered through
aten/src/ATen/native/DispatchStub.h (``REGISTER_DISPATCH``) (v2.13).

They serve the common call: C-contiguous float32 or float64 ``(N, C)`` logits, int64
class indices, no class weight and no label smoothing (``ignore_index`` may match some
rows); every other call, and a target out of range (so that the NumPy kernel raises
torch's IndexError), goes to ember-loss's NumPy kernels (ember_loss/cross_entropy.py).
The forward shifts each row by its target's logit, as the NumPy kernel does (NOTE
[ Shifting by the target logit ] there), with ember_numba/vector_exp.py's exponential;
the backward recomputes the row's exponentials into its output and scales them in
place, so nothing is kept between the two.
"""

import numpy as np

from ember_loss import cross_entropy as ops
from ember_numba.arrays import compilable
from ember_numba.log_softmax import loops


def overrides():
    """``[(op, cpu kernel)]``: ember-loss's fused cross-entropy forward and backward ops on the cpu."""
    return [(ops.cross_entropy_op, cross_entropy), (ops.cross_entropy_backward_op, cross_entropy_backward)]


def _takes(x, target, weight, label_smoothing):
    return (x.ndim == 2 and weight is None and label_smoothing <= 0 and compilable(x)
            and target.dtype == np.int64 and target.ndim == 1 and target.flags.c_contiguous)


def cross_entropy(xp, x, target, weight, *, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``loss::cross_entropy`` on the cpu: ``-log_softmax(x)[t]`` per row, reduced."""
    if _takes(x, target, weight, label_smoothing):
        losses = np.empty(x.shape[0], x.dtype)
        counted = loops.cross_entropy_rows(x, target, ignore_index, losses)
        if counted >= 0:
            if reduction == "none":
                return losses
            total = losses.sum()
            if reduction == "sum":
                return total
            return total / counted if counted else np.asarray(np.nan, x.dtype)  # all ignored: nan, as torch
    return ops.cross_entropy_op.generic(xp, x, target, weight, reduction=reduction, ignore_index=ignore_index,
                                        label_smoothing=label_smoothing)


def cross_entropy_backward(xp, grad, x, target, weight, *, reduction="mean", ignore_index=-100,
                           label_smoothing=0.0):
    """``loss::cross_entropy_backward`` on the cpu: ``grad * (softmax(x) - onehot(t))``
    per row (over the rows counted, for the mean)."""
    if _takes(x, target, weight, label_smoothing) and grad.dtype == x.dtype:
        out = np.empty_like(x)
        if loops.cross_entropy_backward_rows(x, target, ignore_index, grad.reshape(-1), reduction == "mean",
                                               out):
            return out
    return ops.cross_entropy_backward_op.generic(xp, grad, x, target, weight, reduction=reduction,
                                                 ignore_index=ignore_index, label_smoothing=label_smoothing)
