"""Negative log-likelihoods of Poisson and Gaussian observations.

PyTorch counterpart: aten/src/ATen/native/Loss.cpp (``poisson_nll_loss``) and
torch/nn/functional.py (``gaussian_nll_loss`` with its ``var`` shape rules) (v2.13).

    poisson   exp(x) - y * x                 (log_input=True)
              x - y * log(x + eps)           (log_input=False)
              + y log y - y + 0.5 log(2 pi y) where y > 1   (full=True: Stirling's term)
    gaussian  0.5 * (log(max(var, eps)) + (x - y) ** 2 / max(var, eps))
              + 0.5 * log(2 pi)              (full=True)

The clamp of ``var`` changes its value but not its gradient (PyTorch clamps a clone
under no_grad), so the gradient reaching ``var`` is the one at the clamped value.
"""

import math

import ember
from ember import library
from ember.amp.state import composite_inputs
from ember_loss import reduction as reductions


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The Poisson negative log-likelihood of counts ``target`` with rate ``exp(input)`` (or ``input``).

    >>> import ember
    >>> from ember_loss.likelihood import poisson_nll_loss
    >>> poisson_nll_loss(ember.tensor([0.0]), ember.tensor([2.0]))
    tensor(1.)
    """
    input, target = composite_inputs("poisson_nll_loss", input, target)  # on autocast's fp32 list
    if size_average is not None or reduce is not None:
        reduction = reductions.legacy_get_string(size_average, reduce)
    if reduction not in reductions.REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        # NOTE: the term is computed on max(target, 1), so counts 0 and 1 (where it is
        # dropped) take no log of 0. PyTorch computes 0 * log(0) there, which makes its
        # target gradient nan at 0; ember's is 0.
        small = target <= 1
        safe = ember.where(small, ember.ones_like(target), target)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        losses = losses + ember.where(small, ember.zeros_like(stirling), stirling)
    return reductions.apply(losses, reduction)


def _pass_through(ctx, grad):
    return (grad,)


@library.custom_op("loss::clamp_min_pass_through", backward=_pass_through)
def clamp_min_pass_through(xp, x, *, min=0.0):
    """``max(x, min)`` in value, the identity in gradient (PyTorch clamps a clone under no_grad)."""
    return xp.maximum(x, xp.asarray(min, dtype=x.dtype))


def _check_var_shape(input, var):
    """``var`` as PyTorch accepts it: the input's shape, one dim short (a trailing 1 is
    added), or the input's rank with exactly one size-1 dim to broadcast."""
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return var.unsqueeze(-1)
    if input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The Gaussian negative log-likelihood of ``target`` under mean ``input`` and variance ``var``.

    Args:
        var: a tensor (per element, or shaped to broadcast as PyTorch allows) or a float.
        full: add the constant ``0.5 * log(2 pi)``.
        eps: the floor on ``var``, for stability.

    >>> import ember
    >>> from ember_loss.likelihood import gaussian_nll_loss
    >>> gaussian_nll_loss(ember.tensor([1.0]), ember.tensor([3.0]), ember.tensor([2.0]))
    tensor(1.3466)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ember.ones_like(input) * var
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _check_var_shape(input, var)
    if reduction not in reductions.REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # value clamped, gradient passed through unchanged (module docstring)
    var = clamp_min_pass_through(var, min=eps)
    losses = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return reductions.apply(losses, reduction)
