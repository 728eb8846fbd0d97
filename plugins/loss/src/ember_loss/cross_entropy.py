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


import ember
from ember import library
from ember.autograd.grad_mode import grad_state
from ember.dtypes import is_floating_array
from ember_loss import cross_entropy_rows as rows
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


# NOTE [ The forward's exponentials, kept for backward ]
# torch's cross-entropy saves log_softmax's output, so its backward is one exp and a
# subtraction. loss::cross_entropy does the same through its own node: where the 2-d
# kernels have them at hand, the forward returns, after the loss, the shifted
# exponentials and their row sums (and, for plain rows, NOTE [ The plain-rows fast
# path ] in cross_entropy_rows.py, the flat positions of the targets it checked), and
# the op saves its outputs as well as its inputs (``save="both"``). The backward formula
# hands them to the backward op, which then scales them instead of computing them again.
# They are the node's saved tensors, so autograd's own rules cover them: a backward
# whose saved logits or targets were modified in place raises, a retained graph may run
# backward twice (the backward never writes to them), and they go when the graph goes.
# The formula unpacks only these (``ctx.saved_outputs_from(1)``): the loss, saved with
# them, may change in place before backward, as torch's may. The values depend on the
# logits alone, so any reduction reuses them. Every other case (spatial logits, class
# weights with smoothing, a kernel that keeps nothing, such as ember-numba's, which
# recomputes a row's exponentials in its backward loop) returns the loss alone, and the
# backward computes the exponentials.


def _class_shape(x, class_dim, classes):
    shape = [1] * x.ndim
    shape[class_dim] = classes
    return shape


def _smoothing(label_smoothing):
    # PyTorch applies label smoothing only when it is positive (a negative value is ignored).
    return label_smoothing if label_smoothing > 0 else 0.0


@library.custom_op("loss::cross_entropy", save="both", num_outputs=None, opmath=True, jvp=reductions.loss_jvp)
def cross_entropy_op(xp, x, target, weight, *, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``-sum_c a[c] * log_softmax(x)[c]`` per position, then reduced (module docstring).
    Returns ``(loss,)``, or ``(loss, exps, sums)`` / ``(loss, exps, sums, positions)`` where
    it keeps the softmax's parts for the backward (NOTE [ The forward's exponentials, kept
    for backward ])."""
    if x.size == 0 and x.ndim > 1:
        return (_empty_loss(xp, x, reduction),)
    eps = _smoothing(label_smoothing)
    fast = rows.forward(xp, x, target, weight, reduction, ignore_index, eps)  # 2-d logits: cross_entropy_rows.py
    if fast is not None:
        return fast
    class_dim = nll.class_dim_of(x)
    if is_floating_array(target.dtype):
        return _soft_forward(xp, x, target, weight, class_dim, reduction, eps)
    classes = x.shape[class_dim]
    safe, picked_weight, valid = nll.target_weights(xp, target, weight, ignore_index, classes, x.dtype)
    if eps == 0:
        top = x.max(axis=class_dim, keepdims=True)
        exps = x - top
        xp.exp(exps, out=exps)
        picked = x[nll.target_positions(xp, safe, class_dim)] - top.squeeze(class_dim)
        losses = picked_weight * (xp.log(exps.sum(axis=class_dim)) - picked)
    else:
        logp = _log_softmax(xp, x, class_dim)
        losses = -picked_weight * nll.pick(xp, logp, safe, class_dim)
        if weight is not None:
            logp = logp * weight.reshape(_class_shape(x, class_dim, classes))
        smooth = xp.where(valid, -logp.sum(axis=class_dim), 0)
        losses = (1 - eps) * losses + (eps / classes) * smooth
    return (nll.reduce_weighted(xp, losses, picked_weight, reduction),)


def _empty_loss(xp, x, reduction):
    shape = (x.shape[0],) + x.shape[2:]
    if reduction == "none":
        return xp.zeros(shape, dtype=x.dtype)
    return xp.asarray(float("nan") if reduction == "mean" else 0.0, dtype=x.dtype)


def _soft_forward(xp, x, target, weight, class_dim, reduction, eps):
    classes = x.shape[class_dim]
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


@library.custom_op("loss::cross_entropy_backward", opmath=True)
def cross_entropy_backward_op(xp, grad, x, target, weight, exps=None, sums=None, positions=None, *,
                              reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """``grad * (a_sum * softmax(x) - a)`` (NOTE [ Fused cross-entropy ]); ``exps``,
    ``sums`` and ``positions`` are what the forward kept, if anything (NOTE [ The
    forward's exponentials, kept for backward ])."""
    eps = _smoothing(label_smoothing)
    fast = rows.backward(xp, grad, x, target, weight, reduction, ignore_index, eps, exps, sums, positions)
    if fast is not None:  # 2-d logits: cross_entropy_rows.py
        return fast
    class_dim = nll.class_dim_of(x)
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
