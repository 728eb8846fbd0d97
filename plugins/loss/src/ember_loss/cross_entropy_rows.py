"""The fast kernels of ``loss::cross_entropy`` on 2-d logits: rows of ``(N, C)`` logits
as BLAS row sums and dot products, class-index rows shifted by their target logit, and
the exponentials kept on the node for the backward. The reference kernels, which these
must agree with, are in cross_entropy.py (the general log_softmax path); one fixed rule
(``forward``/``backward`` below: 2-d logits, and no class weights together with label
smoothing) sends a call here, and the same call gives the same bits in every process.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``cross_entropy_loss``) and
aten/src/ATen/native/cpu/SoftMaxKernel.cpp (the row-wise softmax the fused kernels
stand in for) (v2.13).
"""

import math

from ember.dtypes import is_floating_array
from ember.native.pointwise.unary import call_quietly
from ember.native.support.blas_sums import row_dots, row_sums
from ember_loss import nll


def forward(xp, x, target, weight, reduction, ignore_index, eps):
    """The loss with what it keeps for the backward (``(loss, exps, sums[, positions])``),
    or None where the rule sends the call to the reference kernel: logits that are not
    2-d, or class indices with both weights and label smoothing ``eps``, or class
    probabilities with weights."""
    if x.ndim != 2:
        return None
    classes = x.shape[1]
    if is_floating_array(target.dtype):
        if weight is not None:
            return None
        losses, exps, sums = _soft_row_losses(xp, x, target, eps)
        if reduction != "none":
            total = losses.sum()
            losses = total if reduction == "sum" else total / x.shape[0]
        return losses, exps, sums
    if eps == 0 and weight is None and nll.all_targets_plain(xp, target, ignore_index, classes):
        return _plain_rows_forward(xp, x, target, reduction, nll.flat_positions(xp, target, x.shape[0], classes))
    if eps and weight is not None:
        return None
    safe, picked_weight, valid = nll.target_weights(xp, target, weight, ignore_index, classes, x.dtype)
    losses, exps, sums = _row_losses(xp, x, safe, eps)
    return nll.reduce_weighted(xp, picked_weight * losses, picked_weight, reduction), exps, sums


def backward(xp, grad, x, target, weight, reduction, ignore_index, eps, exps, sums, positions):
    """The logits' gradient by the same rule as ``forward`` (None: the reference kernel),
    from the forward's kept ``exps``, ``sums`` and ``positions`` where it kept them."""
    if x.ndim != 2:
        return None
    if not is_floating_array(target.dtype):
        if weight is not None and eps:
            return None
        return _hard_target_backward_2d(xp, grad, x, target, weight, reduction, ignore_index, eps,
                                        _exps_and_sums(xp, x, exps, sums), positions)
    if weight is not None:
        return None
    return _soft_target_backward_2d(xp, grad, x, target, reduction, eps, _exps_and_sums(xp, x, exps, sums))


def _shifted_exp(xp, x):
    """For 2-d ``x``: the row maxima and ``exp(x - max)`` (a new array)."""
    top = x.max(axis=1)
    exps = x - top[:, None]
    xp.exp(exps, out=exps)
    return top, exps


def _exps_and_sums(xp, x, exps, sums):
    """``(exp(x - shift), row sums)``: the forward's (``exps``, ``sums``) if it kept them,
    else computed anew (shifted by the row maxima)."""
    if exps is not None:
        return exps, sums
    _, exps = _shifted_exp(xp, x)
    return exps, row_sums(xp, exps)


# NOTE [ The plain-rows fast path ]
# The common call, (N, C) logits and in-range class indices with no weight, no
# smoothing and no index to ignore, needs none of the per-position weights, masks and
# denominators of the general kernels: the forward is a gather, one subtraction, exp,
# a BLAS row sum and log; the backward one scaled copy of the exponentials and a
# scatter into the flat positions of the targets. On (128, 10) logits the general
# kernels' small array operations (where, astype, masks, their sums) cost as much as
# the arithmetic itself. nll_loss has the same path (a gather forward, a scatter
# backward); the range check is one reduction, and the forward's positions go to the
# backward through the node (NOTE [ The forward's exponentials, kept for backward ]).


def _row_losses(xp, x, target, eps=0.0):
    """Per row of 2-d logits, ``-(1 - eps) * logp[t] - eps * mean(logp)`` with
    ``logp = x - logsumexp(x)``, given class indices ``t`` in range: the target entry
    of log_softmax and, with label smoothing ``eps``, the row mean of ``x`` (a BLAS row
    sum). Returns ``(losses, exps, sums)``: the exponentials, for the backward."""
    classes = x.shape[1]
    picked = x.take(nll.flat_positions(xp, target, x.shape[0], classes))
    exps, sums, losses, _ = call_quietly(xp, _target_nll, xp, x, picked)
    if eps:
        # -(1 - eps) * logp[t] - eps * mean(logp) = -logp[t] + eps * (x[t] - mean(x))
        losses += (picked - row_sums(xp, x) / classes) * eps
    return losses, exps, sums


def _target_nll(xp, x, picked):
    """``(exps, row sums, -logp[t], its sum)`` for the target logits ``picked`` of 2-d
    ``x`` (NOTE [ Shifting by the target logit ])."""
    exps = x - picked[:, None]
    xp.exp(exps, out=exps)
    sums = row_sums(xp, exps)
    losses = xp.log(sums)
    total = losses.sum()
    if not math.isfinite(total):  # a logit far above the target's, inf or nan
        top, exps = _shifted_exp(xp, x)
        sums = row_sums(xp, exps)
        # log(sums) - (x[t] - max): x[t] - max is exact where x[t] is the max, so a
        # confident row's small loss does not lose its digits to the max's magnitude.
        losses = xp.log(sums)
        losses -= picked - top
        total = losses.sum()
    return exps, sums, losses, total


# NOTE [ Shifting by the target logit ]
# log_softmax is shift-invariant per row, and the usual shift is the row's max, so that
# no exponential overflows. The 2-d class-index forward shifts by the target logit
# instead: then the loss is just log(sum(exp(x - x[t]))), each sum is at least 1 (the
# target's own term is exp(0)), and the row max, the slowest reduction on short rows
# (12 us of (128, 10) logits against 2 us for a gather), is never taken. A confident
# row keeps its small loss (log(1 + d) of a sum within 1e-7 of 1 + d), where adding a
# max of 40 back would round it to 4e-6. An exponential overflows only where some logit
# exceeds the target's by about 88 (float32; 11 in float16), a loss that large; the
# losses are then not all finite (inf and nan inputs too), which one sum of the
# non-negative losses tells, and the forward falls back to the max shift for the
# batch. The backward's softmax is the same for either shift.


def _soft_row_losses(xp, x, q, eps):
    """Per row of 2-d logits and class probabilities ``q``, with ``a = (1 - eps) * q +
    eps / C``: ``-sum(a * logp) = log(sum(exp(s))) * sum(a) - sum(a * s)`` for the
    shifted logits ``s = x - max``, as BLAS row sums and dot products (no product
    array). Returns ``(losses, exps, sums)``: the exponentials, for the backward."""
    top = x.max(axis=1)
    shifted = x - top[:, None]
    exps = xp.exp(shifted)
    sums = row_sums(xp, exps)
    a_sum = row_sums(xp, q)
    dots = row_dots(xp, q, shifted)
    if eps:
        a_sum = a_sum * (1 - eps) + eps
        dots = dots * (1 - eps) + row_sums(xp, shifted) * (eps / x.shape[1])
    return xp.log(sums) * a_sum - dots, exps, sums


def _plain_rows_forward(xp, x, target, reduction, positions):
    """``_row_losses`` without smoothing, reduced by the sum its overflow check took;
    with the exponentials, their sums and the checked positions, for the backward."""
    exps, sums, losses, total = call_quietly(xp, _target_nll, xp, x, x.take(positions))
    if reduction != "none":
        losses = total / x.shape[0] if reduction == "mean" else total
    return losses, exps, sums, positions


def _hard_target_backward_2d(xp, grad, x, target, weight, reduction, ignore_index, eps,
                             exps_and_sums, kept_positions):
    """``(N, C)`` logits and class indices, no weight where there is label smoothing
    ``eps``: ``c * (softmax(x) - (1 - eps) * onehot(t) - eps / C)`` with ``c = grad *
    scale`` per row, the softmax's 1 / sum folded into the same per-row factor: one
    pass over the forward's exponentials (two with smoothing), and one scatter."""
    rows, classes = x.shape
    positions = None
    if weight is None and not eps:
        positions = _plain_positions(xp, x, target, ignore_index, kept_positions)
    if positions is not None:  # the plain rows: every index in range, nothing ignored
        safe = target
        scale = grad / rows if reduction == "mean" else grad
    else:
        safe, picked_weight, valid = nll.target_weights(
            xp, target, weight, ignore_index, classes, x.dtype, check=False)
        scale = nll.mean_scale(xp, picked_weight, valid, reduction) * grad
    exps, sums = exps_and_sums
    out = exps * (scale / sums)[:, None]
    if eps:
        out -= (scale * (eps / classes))[:, None]
    at_targets = scale * (1 - eps) if eps else scale
    if positions is not None and out.flags.c_contiguous:
        flat = out.reshape(-1)  # a view: out is new and C-ordered
        flat[positions] -= at_targets
    else:
        out[xp.arange(rows), safe] -= at_targets
    return out


def _plain_positions(xp, x, target, ignore_index, positions):
    """The flat target positions of plain rows (NOTE [ The plain-rows fast path ]): the
    forward's (``positions``), or checked and computed anew; None where the rows are not
    plain."""
    if 0 <= ignore_index < x.shape[1]:
        return None
    if positions is None and nll.all_targets_plain(xp, target, ignore_index, x.shape[1]):
        positions = nll.flat_positions(xp, target, *x.shape)
    return positions


def _soft_target_backward_2d(xp, grad, x, q, reduction, eps, exps_and_sums):
    """``c * (sum(a) * softmax(x) - a)`` with ``a = (1 - eps) * q + eps / C`` and
    ``c = grad`` (over N for 'mean') per row: the kept exponentials scaled once, then
    ``q`` scaled and subtracted."""
    c = grad / x.shape[0] if reduction == "mean" else grad
    c = xp.broadcast_to(xp.asarray(c, dtype=x.dtype), (x.shape[0],))
    exps, sums = exps_and_sums
    a_sum = row_sums(xp, q) * (1 - eps) + eps if eps else row_sums(xp, q)
    out = exps * (c * a_sum / sums)[:, None]
    out -= q * (c * (1 - eps))[:, None]
    if eps:
        out -= (c * (eps / x.shape[1]))[:, None]
    return out
