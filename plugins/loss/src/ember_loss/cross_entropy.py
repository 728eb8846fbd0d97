"""``cross_entropy``: log-softmax and negative log-likelihood in one fused op.

PyTorch counterpart: aten/src/ATen/native/LossNLL.cpp (``cross_entropy_loss``,
``cross_entropy_loss_prob_target``, ``cross_entropy_loss_label_smoothing``) and
torch/nn/functional.py ``cross_entropy`` (v2.13).

With ``logp = log_softmax(x)`` over the class dim, every variant is
``loss = -sum_c a[c] * logp[c]`` at each position, for coefficients ``a`` that do not
depend on ``x``:

- class indices ``t``: ``a = (1 - eps) * w[t] * onehot(t) + eps / C * w`` (0 if ignored);
- class probabilities ``q``: ``a = ((1 - eps) * q + eps / C) * w``;

with ``eps`` the label smoothing and ``w`` the class weights (1 if absent). ``'mean'``
divides by the sum of ``w[t]`` over positions not ignored (indices) or by the number of
positions (probabilities). The gradient is then

    d loss / d x = a_sum * softmax(x) - a,       a_sum = sum_c a[c]

which is ``softmax - onehot`` (scaled) in the common case.

# NOTE [ Fused cross-entropy ]
# Cross-entropy runs on every training step, so it is one graph node (``loss::cross_entropy``)
# whose backward is one op (``loss::cross_entropy_backward``) computing the formula above
# in a single kernel, instead of the log_softmax and nll nodes (and the handful of ops
# in their backward formulas) of the composite. bench/loss_cross_entropy.py, forward +
# backward on a shared 2-core machine (medians, one thread): (128, 10) fused 0.21 ms vs
# composite 0.32 ms (torch 0.12 ms); (32, 1000) fused 0.41 ms vs composite 0.62 ms
# (torch 0.16 ms). The fused op was kept. With the 2-d class-index kernels (BLAS row sums,
# one per-row factor, NOTE [ The forward's exponentials, kept for backward ]) the (32, 1000)
# ratio to torch went from 2.4x to 1.45-1.7x (load average 4-7) in issue 16.
# When the backward itself is recorded (``create_graph=True``), the formula is built from
# differentiable ember ops instead, so second derivatives need no extra kernels.
"""

import math

import ember
from ember import library
from ember.autograd.grad_mode import grad_state
from ember.dtypes import is_floating_array
from ember.native.pointwise.unary import call_quietly
from ember.native.support.blas_sums import row_dots, row_sums
from ember_loss import nll
from ember_loss import reduction as reductions


def _log_softmax(xp, x, class_dim):
    shifted = x - x.max(axis=class_dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=class_dim, keepdims=True))
    return shifted


def _softmax(xp, x, class_dim):
    e = x - x.max(axis=class_dim, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=class_dim, keepdims=True)
    return e


def _shifted_exp(xp, x):
    """For 2-d ``x``: the row maxima and ``exp(x - max)`` (a new array)."""
    top = x.max(axis=1)
    exps = x - top[:, None]
    xp.exp(exps, out=exps)
    return top, exps


# NOTE [ The forward's exponentials, kept for backward ]
# torch's cross-entropy saves log_softmax's output, so its backward is one exp and a
# subtraction. loss::cross_entropy does the same through its own node: where the 2-d
# kernels have them at hand, the forward returns, after the loss, the shifted
# exponentials and their row sums (and, for plain rows, NOTE [ The plain-rows fast
# path ], the flat positions of the targets it checked), and the op saves its outputs
# as well as its inputs (``save="both"``). The backward formula hands them to the
# backward op, which then scales them instead of computing them again. They are the
# node's saved tensors, so autograd's own rules cover them: a backward whose saved
# logits or targets were modified in place raises, a retained graph may run backward
# twice (the backward never writes to them), and they go when the graph goes. The
# formula unpacks only these (``ctx.saved_outputs_from(1)``): the loss, saved with
# them, may change in place before backward, as torch's may. The values depend on the
# logits alone, so any reduction reuses them. Every other case
# (spatial logits, class weights with smoothing, a kernel that keeps nothing, such as
# ember-numba's, which recomputes a row's exponentials in its backward loop) returns
# the loss alone, and the backward computes the exponentials.


def _exps_and_sums(xp, x, exps, sums):
    """``(exp(x - shift), row sums)``: the forward's (``exps``, ``sums``) if it kept them,
    else computed anew (shifted by the row maxima)."""
    if exps is not None:
        return exps, sums
    _, exps = _shifted_exp(xp, x)
    return exps, row_sums(xp, exps)


def _class_shape(x, class_dim, classes):
    shape = [1] * x.ndim
    shape[class_dim] = classes
    return shape


def _smoothing(label_smoothing):
    # PyTorch applies label smoothing only when it is positive (a negative value is ignored).
    return label_smoothing if label_smoothing > 0 else 0.0


@library.custom_op("loss::cross_entropy", save="both", num_outputs=None)
def cross_entropy_op(xp, x, target, weight, *, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``-sum_c a[c] * log_softmax(x)[c]`` per position, then reduced (module docstring).
    Returns ``(loss,)``, or ``(loss, exps, sums)`` / ``(loss, exps, sums, positions)`` where
    it keeps the softmax's parts for the backward (NOTE [ The forward's exponentials, kept
    for backward ])."""
    if x.size == 0 and x.ndim > 1:
        return (_empty_loss(xp, x, reduction),)
    class_dim = nll.class_dim_of(x)
    if is_floating_array(target.dtype):
        return _soft_forward(xp, x, target, weight, class_dim, reduction, _smoothing(label_smoothing))
    classes = x.shape[class_dim]
    eps = _smoothing(label_smoothing)
    if eps == 0 and x.ndim == 2 and weight is None and nll.all_targets_plain(xp, target, ignore_index, classes):
        return _plain_rows_forward(xp, x, target, reduction, nll.flat_positions(xp, target, x.shape[0], classes))
    safe, picked_weight, valid = nll.target_weights(xp, target, weight, ignore_index, classes, x.dtype)
    if x.ndim == 2 and (eps == 0 or weight is None):
        losses, exps, sums = _row_losses(xp, x, safe, eps)
        return nll.reduce_weighted(xp, picked_weight * losses, picked_weight, reduction), exps, sums
    if eps == 0:
        top = x.max(axis=class_dim, keepdims=True)
        exps = x - top
        xp.exp(exps, out=exps)
        picked = x[nll.target_positions(xp, safe, class_dim)] - top.squeeze(class_dim)
        losses = picked_weight * (xp.log(exps.sum(axis=class_dim)) - picked)  # as _row_losses
    else:
        logp = _log_softmax(xp, x, class_dim)
        losses = -picked_weight * nll.pick(xp, logp, safe, class_dim)
        if weight is not None:
            logp = logp * weight.reshape(_class_shape(x, class_dim, classes))
        smooth = xp.where(valid, -logp.sum(axis=class_dim), 0)
        losses = (1 - eps) * losses + (eps / classes) * smooth
    return (nll.reduce_weighted(xp, losses, picked_weight, reduction),)


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


def _empty_loss(xp, x, reduction):
    shape = (x.shape[0],) + x.shape[2:]
    if reduction == "none":
        return xp.zeros(shape, dtype=x.dtype)
    return xp.asarray(float("nan") if reduction == "mean" else 0.0, dtype=x.dtype)


def _soft_forward(xp, x, target, weight, class_dim, reduction, eps):
    classes = x.shape[class_dim]
    if x.ndim == 2 and weight is None:
        losses, exps, sums = _soft_row_losses(xp, x, target, eps)
        if reduction != "none":
            total = losses.sum()
            losses = total if reduction == "sum" else total / x.shape[0]
        return losses, exps, sums
    q = target * (1 - eps) + eps / classes if eps else target
    products = _log_softmax(xp, x, class_dim) * q
    if weight is not None:
        products = products * weight.reshape(_class_shape(x, class_dim, classes))
    if reduction == "none":
        return (-products.sum(axis=class_dim),)
    total = -products.sum()
    if reduction == "sum":
        return (total,)
    return (total / (x.size // classes),)


def coefficients(xp, x, target, weight, reduction, ignore_index, label_smoothing):
    """``(a, a_sum)`` of the module docstring for class indices, scaled for ``'mean'``,
    each shaped to broadcast against ``x``."""
    class_dim = nll.class_dim_of(x)
    classes = x.shape[class_dim]
    safe, picked_weight, valid = nll.target_weights(xp, target, weight, ignore_index, classes, x.dtype, check=False)
    scale = nll.with_class_dim(nll.mean_scale(xp, picked_weight, valid, reduction), class_dim)
    a = nll.onehot(xp, safe, classes, class_dim, x.dtype) * scale
    a_sum = scale
    eps = _smoothing(label_smoothing)
    if eps:
        per_class = xp.ones(classes, dtype=x.dtype) if weight is None else weight
        per_class = per_class.reshape(_class_shape(x, class_dim, classes))
        unit = nll.with_class_dim(_unit_scale(xp, picked_weight, valid, reduction), class_dim)
        a = (1 - eps) * a + (eps / classes) * per_class * unit
        a_sum = (1 - eps) * a_sum + (eps / classes) * per_class.sum() * unit
    return a, a_sum


def _unit_scale(xp, picked_weight, valid, reduction):
    """Per position: 1 over the mean's denominator (or 1) where not ignored, else 0."""
    if reduction != "mean":
        return valid.astype(picked_weight.dtype)
    denominator = picked_weight.sum()
    unit = float("inf") if denominator == 0 else 1 / denominator  # inf * 0 weights = nan, as in PyTorch
    return xp.where(valid, unit, 0).astype(picked_weight.dtype)


@library.custom_op("loss::cross_entropy_coefficients", num_outputs=2)
def coefficients_op(xp, x, target, weight, *, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """Constant ``(a, a_sum)`` for class-index targets (for the differentiable backward)."""
    return coefficients(xp, x, target, weight, reduction, ignore_index, label_smoothing)


@library.custom_op("loss::cross_entropy_backward")
def cross_entropy_backward_op(xp, grad, x, target, weight, exps=None, sums=None, positions=None, *,
                              reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``grad * (a_sum * softmax(x) - a)`` (NOTE [ Fused cross-entropy ]); ``exps``,
    ``sums`` and ``positions`` are what the forward kept, if anything (NOTE [ The
    forward's exponentials, kept for backward ])."""
    class_dim = nll.class_dim_of(x)
    eps = _smoothing(label_smoothing)
    if x.ndim == 2 and not is_floating_array(target.dtype) and (weight is None or not eps):
        return _hard_target_backward_2d(xp, grad, x, target, weight, reduction, ignore_index, eps,
                                        _exps_and_sums(xp, x, exps, sums), positions)
    if x.ndim == 2 and is_floating_array(target.dtype) and weight is None:
        return _soft_target_backward_2d(xp, grad, x, target, reduction, eps, _exps_and_sums(xp, x, exps, sums))
    if reduction == "none" and x.ndim > 1:
        grad = nll.with_class_dim(grad, class_dim)
    out = _softmax(xp, x, class_dim)
    if is_floating_array(target.dtype):
        a, a_sum = _soft_coefficients(xp, x, target, weight, reduction, label_smoothing)
        out *= a_sum
        out -= a
    elif _smoothing(label_smoothing):
        a, a_sum = coefficients(xp, x, target, weight, reduction, ignore_index, label_smoothing)
        out *= a_sum
        out -= a
    else:
        # a = scale * onehot(t), a_sum = scale: subtract the scale at the targets only
        safe, picked_weight, valid = nll.target_weights(xp, target, weight, ignore_index, x.shape[class_dim],
                                                        x.dtype, check=False)
        scale = nll.mean_scale(xp, picked_weight, valid, reduction)
        out *= nll.with_class_dim(scale, class_dim)
        out[nll.target_positions(xp, safe, class_dim)] -= scale
    out *= grad
    return out


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


def _soft_coefficients(xp, x, target, weight, reduction, label_smoothing):
    class_dim = nll.class_dim_of(x)
    classes = x.shape[class_dim]
    eps = _smoothing(label_smoothing)
    a = target * (1 - eps) + eps / classes if eps else target
    if weight is not None:
        a = a * weight.reshape(_class_shape(x, class_dim, classes))
    if reduction == "mean":
        a = a / (x.size // classes)
    return a, a.sum(axis=class_dim, keepdims=True)


def _cross_entropy_backward(ctx, grad, *kept_grads):
    """The node's formula; ``kept_grads`` (for the kept exponentials, sums and positions)
    are None: nothing downstream reads those outputs."""
    x, target, weight = ctx.saved_inputs
    # the outputs after the loss, if the forward kept any (NOTE [ The forward's
    # exponentials, kept for backward ]; ember-numba's keeps none); the loss is not
    # read, so it may change in place before backward, as torch's may
    kept = ctx.saved_outputs_from(1) if ctx.num_outputs > 1 else ()
    attrs = ctx.attrs
    soft = target.dtype.is_floating_point
    grad_input = grad_target = None
    if ctx.needs_input_grad[0]:
        if grad_state.enabled:  # create_graph: differentiable ember ops (NOTE [ Fused cross-entropy ])
            class_dim = nll.class_dim_of(x)
            a, a_sum = _differentiable_coefficients(x, target, weight, attrs)
            g = grad.unsqueeze(class_dim) if attrs.get("reduction", "mean") == "none" and x.ndim > 1 else grad
            grad_input = g * (x.softmax(class_dim) * a_sum - a)
        else:
            grad_input = cross_entropy_backward_op(grad, x, target, weight, *kept, **attrs)
    grad_weight = None
    if soft and ctx.needs_input_grad[1]:
        grad_target = _soft_target_grad(grad, x, weight, attrs)
    if soft and weight is not None and ctx.needs_input_grad[2]:
        grad_weight = _soft_weight_grad(grad, x, target, attrs)
    return grad_input, grad_target, grad_weight


def _differentiable_coefficients(x, target, weight, attrs):
    if not target.dtype.is_floating_point:
        return coefficients_op(x.detach(), target, weight, **attrs)
    class_dim = nll.class_dim_of(x)
    classes = x.shape[class_dim]
    eps = _smoothing(attrs.get("label_smoothing", 0.0))
    a = target * (1 - eps) + eps / classes if eps else target
    if weight is not None:
        a = a * weight.reshape(_class_shape(x, class_dim, classes))
    if attrs.get("reduction", "mean") == "mean":
        a = a / (x.numel() // classes)
    return a, a.sum(class_dim, keepdim=True)


def _soft_target_grad(grad, x, weight, attrs):
    # loss = -sum(((1 - eps) * q + eps / C) * w * logp): d/dq = -(1 - eps) * w * logp.
    class_dim = nll.class_dim_of(x)
    classes = x.shape[class_dim]
    reduction = attrs.get("reduction", "mean")
    coefficient = -x.log_softmax(class_dim) * (1 - _smoothing(attrs.get("label_smoothing", 0.0)))
    if weight is not None:
        coefficient = coefficient * weight.reshape(_class_shape(x, class_dim, classes))
    if reduction == "mean":
        coefficient = coefficient / (x.numel() // classes)
    elif reduction == "none" and x.ndim > 1:
        grad = grad.unsqueeze(class_dim)
    return grad * coefficient


def _soft_weight_grad(grad, x, target, attrs):
    # loss = -sum(q_s * w * logp): d/dw[c] = -sum over positions of q_s[c] * logp[c] (scaled)
    class_dim = nll.class_dim_of(x)
    classes = x.shape[class_dim]
    reduction = attrs.get("reduction", "mean")
    eps = _smoothing(attrs.get("label_smoothing", 0.0))
    q = target * (1 - eps) + eps / classes if eps else target
    per_position = -(q * x.log_softmax(class_dim))
    if reduction == "mean":
        per_position = per_position / (x.numel() // classes)
    elif reduction == "none" and x.ndim > 1:
        grad = grad.unsqueeze(class_dim)
    other_dims = tuple(d for d in range(x.ndim) if d != class_dim)
    contribution = grad * per_position
    return contribution.sum(other_dims) if other_dims else contribution


library.register_autograd(cross_entropy_op, _cross_entropy_backward)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """The cross-entropy between ``softmax(input)`` and the target classes, from logits.

    Args:
        input: unnormalised logits ``(N, C)``, ``(C,)`` or ``(N, C, d1, ..., dK)``.
        target: class indices (int64) of shape ``(N,)``, ``()`` or ``(N, d1, ..., dK)``,
            or class probabilities of the input's shape (floating point).
        weight: a ``(C,)`` tensor of per-class weights.
        ignore_index: a class index that contributes no loss (class indices only).
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        label_smoothing: in ``[0, 1]``; mixes the target with the uniform distribution.

    Returns:
        A scalar, or the per-position losses for ``reduction='none'``.

    Where ember differs: this is one fused op that saves the logits, so writing into
    ``input`` in place after the call makes the backward raise the version-counter
    error; PyTorch saves ``log_softmax``'s output instead and runs.

    >>> import ember
    >>> from ember_loss.cross_entropy import cross_entropy
    >>> cross_entropy(ember.tensor([[2.0, 0.0], [0.0, 2.0]]), ember.tensor([0, 1]))
    tensor(0.1269)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    if input.shape == target.shape:
        input, target, weight = _check_probabilities(input, target, weight, ignore_index,
                                                     label_smoothing)
    else:
        if label_smoothing > 0.0 and label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        target, weight = nll.check_class_target(input, target, weight)
    if not input.dtype.is_floating_point:
        kernel = "lastdim_kernel_impl" if input.ndim <= 2 else "kernel_impl"
        raise NotImplementedError(f"\"log_softmax_{kernel}\" not implemented for "
                                  f"'{nll._type_name(input.dtype)}'")
    # the loss; after it, what the op keeps for its backward (NOTE [ The forward's
    # exponentials, kept for backward ])
    loss, *_ = cross_entropy_op(input, target, weight, reduction=reduction,
                                ignore_index=ignore_index,
                                label_smoothing=float(label_smoothing))
    return loss


def _check_probabilities(input, target, weight, ignore_index, label_smoothing):
    if not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class probabilities, got "
                           f"{nll._type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    nll.check_weight(input, weight, prefix="cross_entropy: ")
    if input.dtype.is_floating_point:
        # the composite in PyTorch multiplies input, target and weight: they promote together
        common = ember.promote_types(input.dtype, target.dtype)
        if weight is not None:
            common = ember.promote_types(common, weight.dtype)
        input, target = input.to(common), target.to(common)
        weight = weight.to(common) if weight is not None else None
    return input, target, weight
