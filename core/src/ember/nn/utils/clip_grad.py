"""Gradient clipping by total norm or by value.

PyTorch counterpart: torch/nn/utils/clip_grad.py (v2.13). ``foreach=`` is accepted
and ignored: ember has no multi-tensor kernels, so one loop serves both paths.
"""

import math

from ember.autograd.grad_mode import no_grad
from ember.tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken as one vector: the norm of their norms."""
    from ember import norm, stack, tensor

    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        total = norm(stack([norm(t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total norm is at most ``max_norm``.

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``. Returns the total norm
    before clipping (``norm_type`` may be ``inf``: the largest absolute value).

    >>> import ember
    >>> p = ember.nn.Parameter(ember.ones(4)); p.grad = ember.full((4,), 3.0)
    >>> ember.nn.utils.clip_grad_norm_([p], 1.0)
    tensor(6.)
    """
    grads = _grads(parameters)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total_norm
    with no_grad():
        clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef.to(g.dtype))
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
