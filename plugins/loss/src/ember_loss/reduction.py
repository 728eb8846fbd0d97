"""The ``reduction`` argument every loss takes, and the legacy ``size_average``/``reduce`` pair.

PyTorch counterpart: torch/nn/_reduction.py and ``apply_loss_reduction`` in
aten/src/ATen/native/Loss.cpp (v2.13).

``'none'`` returns the per-element losses, ``'sum'`` their sum, ``'mean'`` their mean.
"""

import warnings

REDUCTIONS = ("none", "mean", "sum")


def loss_jvp(ctx, *tangents):
    """A loss op's forward derivative from its backward formula: each loss element
    depends on one position's inputs (its row of classes, or its element), so the
    backward at ``grad = 1`` is that element's slope; times an input's tangent and summed
    down to the loss's shape (everything for 'mean'/'sum', the class dim for 'none'), it
    is that input's share of the jvp (NOTE [ Forward grads at the dispatcher ] in
    ember/autograd/forward_grad.py)."""
    from ember.native.factory import ones_like

    loss = ctx.saved_outputs[0]
    rest = (None,) * (len(ctx.saved_outputs) - 1)
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        ctx.needs_input_grad = tuple(j == i for j in range(len(tangents)))
        slope = ctx.op.backward(ctx, ones_like(loss), *rest)[i]
        if slope is None:  # an input the formula does not differentiate (a class weight)
            continue
        share = slope * t
        if loss.ndim == 0:
            share = share.sum()
        elif share.shape != loss.shape:  # 'none' over classes: the class dim goes
            share = share.sum(1 if share.ndim > 1 else 0)
        total = share if total is None else total + share
    return total if total is not None else loss * 0


def check(reduction):
    """Raise PyTorch's ValueError for an unknown reduction; ``'elementwise_mean'`` is the old 'mean'."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return "mean"
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction the deprecated ``size_average`` and ``reduce`` flags ask for (None means True)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        result = "mean"
    elif reduce:
        result = "sum"
    else:
        result = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.",
                      stacklevel=3)
    return result


def resolve(size_average, reduce, reduction):
    """``reduction``, unless a legacy flag is given, which then decides (as in PyTorch)."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return check(reduction)


def apply(loss, reduction):
    """Reduce per-element losses: ``loss`` itself, its mean, or its sum."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
