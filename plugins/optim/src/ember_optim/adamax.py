"""Adamax: Adam with an infinity-norm second moment.

PyTorch counterpart: torch/optim/adamax.py (v2.13), the single-tensor path.
"""

import ember
from ember_optim._checks import check_betas, check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options, value
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    r"""Adamax: Adam whose second moment is a decaying running maximum of ``|g|``.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t = 1, 2, ...`::

        if maximize:            g = -g
        if weight_decay != 0:   g = g + weight_decay * theta
        m = beta1 * m + (1 - beta1) * g                      (exp_avg)
        u = max(beta2 * u, |g| + eps)                        (exp_inf)
        theta = theta - lr / (1 - beta1 ** t) * m / u

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: decay rates of ``m`` and ``u`` (default (0.9, 0.999)).
        eps: added to ``|g|`` (default 1e-8).
        weight_decay: L2 penalty (default 0).
        maximize: ascend the objective instead of descending it.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.Adamax([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, *, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_non_negative("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["exp_avg"] = ember.zeros_like(param)
        state["exp_inf"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_infs, steps = self._gather(group, "exp_avg", "exp_inf", "step")
            adamax(params, grads, exp_avgs, exp_infs, steps,
                   **options(group, "betas", "eps", "lr", "weight_decay", "maximize"))
        return loss


def adamax(params, grads, exp_avgs, exp_infs, steps, *, eps, beta1, beta2, lr, weight_decay, maximize):
    """The Adamax update of each ``params[i]`` and its state, in place (see :class:`Adamax`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf = exp_avgs[i], exp_infs[i]
        steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(ember.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        clr = lr / (1 - beta1 ** value(steps[i]))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
