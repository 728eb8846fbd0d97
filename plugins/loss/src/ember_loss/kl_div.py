"""``kl_div``: the Kullback-Leibler divergence of a target distribution from log-probabilities.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``kl_div``) and torch/nn/functional.py
``kl_div`` (``'batchmean'`` and the warning on ``'mean'``) (v2.13).

With ``input`` the log-probabilities ``log q`` and ``target`` the distribution ``p``:

    loss = p * (log p - log q)          (0 where p == 0)
    loss = exp(t) * (t - log q)         with log_target=True, t = log p

``'batchmean'`` divides the sum by the batch size (the first dim), which is the
mathematical KL divergence per sample; ``'mean'`` divides by every element.
"""

import warnings

from ember import library
from ember.amp.state import composite_inputs
from ember_loss import reduction as reductions


def _xlogx_kernel(xp, t):
    out = t.copy()
    positive = t != 0
    out[positive] = t[positive] * xp.log(t[positive])  # log only where it is needed: no 0 * -inf
    return out


def _xlogx_backward(ctx, grad):
    # PyTorch's xlogy(t, t) derivative: log(t) + t / t, which is nan at t == 0
    (t,) = ctx.saved_inputs
    return (grad * (t.log() + t / t),)


XLOGX = library.custom_op("loss::xlogx", save="inputs", backward=_xlogx_backward)(_xlogx_kernel)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log(target) - input)``, reduced.

    Args:
        input: log-probabilities.
        target: probabilities, or log-probabilities with ``log_target=True``.
        reduction: ``'none'``, ``'batchmean'``, ``'sum'`` or ``'mean'``.

    >>> import ember
    >>> from ember_loss.kl_div import kl_div
    >>> kl_div(ember.tensor([0.5, 0.5]).log(), ember.tensor([0.25, 0.75]), reduction="sum")
    tensor(0.1308)
    """
    input, target = composite_inputs("kl_div", input, target)  # on autocast's fp32 list
    if size_average is not None or reduce is not None:
        reduction = reductions.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction != "batchmean":
        reduction = reductions.check(reduction)
    if log_target:
        losses = target.exp() * (target - input)
    else:
        losses = XLOGX(target) - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.ndim != 0 else total
    return reductions.apply(losses, reduction)
