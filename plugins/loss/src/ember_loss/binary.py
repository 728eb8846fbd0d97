"""Binary cross-entropy, on probabilities and on logits.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``binary_cross_entropy``,
``binary_cross_entropy_backward``, ``binary_cross_entropy_with_logits``),
tools/autograd/derivatives.yaml (the target gradients) and torch/nn/functional.py (v2.13).

On probabilities ``p`` and targets ``y`` (both per element, weight ``w``):

    loss = -w * (y * max(log p, -100) + (1 - y) * max(log(1 - p), -100))

the log clamp keeps the loss at ``p = 0`` or ``1`` finite, as in PyTorch (the target
gradient ``-logit(p)`` is not clamped there, in PyTorch either). On logits ``x`` with
``pos_weight`` ``pw`` (the weight of the positive term), in the stable form:

    loss = w * ((1 - y) * x - (1 + (pw - 1) * y) * log_sigmoid(x))
    log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))

which never exponentiates a large positive number. Both are fused elementwise ops with
backward formulas written in ember ops (so they differentiate again); the reduction is
applied afterwards.
"""

import ember
from ember import library
from ember.autograd.grad_mode import grad_state
from ember_loss import reduction as reductions

LOG_CLAMP = -100.0
EPSILON = 1e-12  # PyTorch's floor on p * (1 - p) in the gradient


def _bce_kernel(xp, p, y, w):
    if p.size and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with _quiet(xp):
        log_p = xp.maximum(xp.log(p), LOG_CLAMP)
        log_1mp = xp.maximum(xp.log1p(-p), LOG_CLAMP)
    loss = (y - 1) * log_1mp - y * log_p
    if w is not None:
        loss = loss * w
    return loss.astype(p.dtype, copy=False)


def _quiet(xp):
    import contextlib

    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def _bce_backward(ctx, grad):
    p, y, w = ctx.saved_inputs
    if w is not None:
        grad = grad * w
    grad_input = grad_target = None
    if ctx.needs_input_grad[0]:
        grad_input = grad * (p - y) / ((1 - p) * p).clamp_min(EPSILON)
    if ctx.needs_input_grad[1]:
        # -logit(p), unclamped as in PyTorch (infinite at p = 0 or 1)
        grad_target = grad * ((-p).log1p() - p.log())
    return grad_input, grad_target, None


BINARY_CROSS_ENTROPY = library.custom_op("loss::binary_cross_entropy", save="inputs", jvp=reductions.loss_jvp,
                                         backward=_bce_backward)(_bce_kernel)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy between probabilities ``input`` and targets in ``[0, 1]``.

    Args:
        input: probabilities in ``[0, 1]``; anything else is an error, as in PyTorch.
        target: same shape as ``input``.
        weight: broadcast to the target's shape, multiplies each element's loss.

    >>> import ember
    >>> from ember_loss.binary import binary_cross_entropy
    >>> binary_cross_entropy(ember.tensor([0.5, 0.9]), ember.tensor([1.0, 1.0]))
    tensor(0.3993)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    _check_no_grad("binary_cross_entropy", weight=weight)
    if weight is not None:
        weight = weight.expand(ember.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
        _check_inplace_broadcast(input, weight)
    return reductions.apply(BINARY_CROSS_ENTROPY(input, target, weight), reduction)


def _log_sigmoid(xp, x):
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _bce_logits_kernel(xp, x, y, pos_weight):
    log_sig = _log_sigmoid(xp, x)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * y + 1)
    return ((1 - y) * x - log_sig).astype(x.dtype, copy=False)


def _log_sigmoid_ops(x):
    # The same stable form in ember ops, for the backward formulas.
    return -((-x).relu() + (-x.abs()).exp().log1p())


def _bce_logits_backward(ctx, grad):
    x, y, pos_weight = ctx.saved_inputs
    grad_input = grad_target = None
    if ctx.needs_input_grad[0]:
        # d/dx = (1 - y) - (1 + (pw - 1) y) * sigmoid(-x)
        if pos_weight is None:
            grad_input = grad * (x.sigmoid() - y)
        else:
            grad_input = grad * ((1 - y) - ((pos_weight - 1) * y + 1) * (-x).sigmoid())
    if ctx.needs_input_grad[1]:
        grad_target = grad * (-x) if pos_weight is None else grad * (-x - (pos_weight - 1) * _log_sigmoid_ops(x))
    return grad_input, grad_target, None


BINARY_CROSS_ENTROPY_WITH_LOGITS = library.custom_op("loss::binary_cross_entropy_with_logits", save="inputs",
                                                     jvp=reductions.loss_jvp,
                                                     backward=_bce_logits_backward)(_bce_logits_kernel)


def _check_no_grad(function, **tensors):
    # PyTorch gives weight and pos_weight no derivative and refuses them when they require grad.
    for name, tensor in tensors.items():
        if tensor is not None and tensor.requires_grad and grad_state.enabled:  # only a recorded call
            raise RuntimeError(f"The function '{function}' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")


def _check_inplace_broadcast(input, other):
    # PyTorch multiplies the loss by weight and pos_weight in place: they may broadcast
    # to the input's shape but not grow it.
    shape = tuple(ember.broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits.

    Args:
        input: logits; target: same shape, values in ``[0, 1]``.
        weight: broadcastable to the input's shape; multiplies each element's loss.
        pos_weight: broadcastable along the last dims (e.g. ``(C,)`` per class);
            weighs the positive term ``y * log sigmoid(x)``.

    >>> import ember
    >>> from ember_loss.binary import binary_cross_entropy_with_logits
    >>> binary_cross_entropy_with_logits(ember.tensor([0.0, 2.0]), ember.tensor([1.0, 0.0]))
    tensor(1.4100)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_no_grad("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    if pos_weight is not None:
        _check_inplace_broadcast(input, pos_weight)
    losses = BINARY_CROSS_ENTROPY_WITH_LOGITS(input, target, pos_weight)
    if weight is not None:
        _check_inplace_broadcast(input, weight)
        losses = losses * weight
    return reductions.apply(losses, reduction)
