"""AdamW: Adam with decoupled weight decay.

PyTorch counterpart: torch/optim/adamw.py (v2.13), where AdamW is Adam with
``decoupled_weight_decay=True`` and a default weight decay of 1e-2.
"""

from ember_optim.adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Adam whose weight decay shrinks the weights directly instead of adding to the gradient.

    The step is :class:`~ember_optim.adam.Adam`'s with ``decoupled_weight_decay=True``::

        theta = theta * (1 - lr * weight_decay)
        ... then Adam's update without the L2 term in the gradient

    Args: as :class:`~ember_optim.adam.Adam`, with ``weight_decay`` defaulting to 1e-2.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.AdamW([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.8990, -1.8980], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, decoupled_weight_decay=True, foreach=foreach, fused=fused)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True  # an AdamW dict from before the flag existed


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
          weight_decay, eps, maximize):
    """The AdamW update: :func:`~ember_optim.adam.adam` with decoupled weight decay."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, amsgrad=amsgrad, beta1=beta1, beta2=beta2,
         lr=lr, weight_decay=weight_decay, eps=eps, maximize=maximize, decoupled_weight_decay=True)
