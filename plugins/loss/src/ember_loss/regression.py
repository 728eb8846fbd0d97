"""Regression losses: ``l1_loss``, ``mse_loss``, ``smooth_l1_loss``, ``huber_loss``.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``mse_loss``, ``smooth_l1_loss``,
``huber_loss``), PointwiseOps (``l1_loss``) and torch/nn/functional.py (the size
warning, ``weight=``) (v2.13).

With ``d = input - target`` (broadcast, with PyTorch's warning when the sizes differ):

    l1        |d|
    mse       d ** 2
    smooth_l1 0.5 * d ** 2 / beta  if |d| < beta  else |d| - 0.5 * beta
    huber     0.5 * d ** 2         if |d| < delta  else delta * (|d| - 0.5 * delta)

``mse_loss`` is the fused op ``loss::mse_loss`` (one graph node; the backward
``2 * d * grad`` is written with ember ops so it differentiates again); the others are
short compositions of ember ops, whose autograd gives the gradients.
"""

import warnings

import ember
from ember import library
from ember.amp.state import composite_inputs
from ember.dtypes import accumulate_dtype
from ember_loss import reduction as reductions


def _expanded(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)
        input, target = ember.broadcast_tensors(input, target)
    return input, target


def _weighted(losses, weight, input, reduction, mean_over_weights=True):
    """PyTorch's ``weight=`` path: elementwise weights of the input's size."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    losses = losses * weight
    if reduction == "mean" and mean_over_weights:
        return losses.sum() / weight.sum()
    return reductions.apply(losses, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """The mean (or sum) absolute error ``|input - target|``.

    >>> import ember
    >>> from ember_loss.regression import l1_loss
    >>> l1_loss(ember.tensor([1.0, 2.0]), ember.tensor([0.0, 4.0]))
    tensor(1.5000)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    input, target = composite_inputs("l1_loss", input, target)  # on autocast's fp32 list
    input, target = _expanded(input, target)
    losses = (input - target).abs()
    if weight is not None:
        return _weighted(losses, weight, input, reduction)
    return reductions.apply(losses, reduction)


def _mse_kernel(xp, x, t, *, reduction="mean"):
    d = x - t
    d *= d  # rounded to a float16 input's dtype (inf past 65504), as torch's pow is
    if reduction == "none":
        return d
    total = d.sum(dtype=accumulate_dtype(d.dtype))  # then summed in float32, as torch's mean and sum
    if reduction == "mean":
        total = total / d.size if d.size else xp.asarray(float("nan"), dtype=d.dtype)
    return total.astype(d.dtype, copy=False)


def _mse_backward(ctx, grad):
    x, t = ctx.saved_inputs
    scale = 2.0 / max(x.numel(), 1) if ctx.attrs["reduction"] == "mean" else 2.0
    grad_input = (x - t) * (grad * scale)
    return grad_input, -grad_input if ctx.needs_input_grad[1] else None


MSE_LOSS = library.custom_op("loss::mse_loss", promote="default", save="inputs",
                             backward=_mse_backward, jvp=reductions.loss_jvp)(_mse_kernel)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """The mean (or sum) squared error ``(input - target) ** 2``.

    >>> import ember
    >>> from ember_loss.regression import mse_loss
    >>> mse_loss(ember.tensor([1.0, 2.0]), ember.tensor([0.0, 4.0]))
    tensor(2.5000)
    """
    reduction = reductions.resolve(size_average, reduce, reduction)
    input, target = _expanded(input, target)
    if weight is not None:
        return _weighted((input - target) ** 2, weight, input, reduction)
    return MSE_LOSS(input, target, reduction=reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error below ``beta``, absolute error above (``beta=0`` is ``l1_loss``).

    >>> import ember
    >>> from ember_loss.regression import smooth_l1_loss
    >>> smooth_l1_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]))
    tensor(1.3125)
    """
    input, target = composite_inputs("smooth_l1_loss", input, target)  # on autocast's fp32 list
    reduction = reductions.resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _expanded(input, target)
    d = input - target
    if beta == 0.0:
        return reductions.apply(d.abs(), reduction)
    ad = d.abs()
    losses = ember.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return reductions.apply(losses, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error up to ``delta``, ``delta``-scaled absolute error above.

    >>> import ember
    >>> from ember_loss.regression import huber_loss
    >>> huber_loss(ember.tensor([0.5, 3.0]), ember.tensor([0.0, 0.0]), delta=2.0)
    tensor(2.0625)
    """
    input, target = composite_inputs("huber_loss", input, target)  # on autocast's fp32 list
    reduction = reductions.check(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    input, target = _expanded(input, target)
    d = input - target
    ad = d.abs()
    # At |d| == delta both branches agree in value and slope; the linear one is taken
    # there, as PyTorch's double backward does, so the second derivative is 0 at the kink.
    losses = ember.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(losses, weight, input, reduction, mean_over_weights=False)
    return reductions.apply(losses, reduction)
