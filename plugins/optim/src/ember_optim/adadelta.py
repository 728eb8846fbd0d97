"""Adadelta, with weight decay.

PyTorch counterpart: torch/optim/adadelta.py (v2.13), the single-tensor path.
"""

import ember
from ember_optim._checks import check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta: steps sized by the ratio of running RMS of past updates and of gradients.

    For each parameter :math:`\theta` with gradient :math:`g`::

        if maximize:            g = -g
        if weight_decay != 0:   g = g + weight_decay * theta
        v = rho * v + (1 - rho) * g * g                          (square_avg)
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta                  (acc_delta)
        theta = theta - lr * delta

    Args:
        params: tensors or parameter groups to optimize.
        lr: scale of the update (default 1.0).
        rho: decay rate of the running averages (default 0.9).
        eps: added inside the square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        maximize: ascend the objective instead of descending it.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.Adadelta([w], lr=1.0)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_eps(eps)
        check_non_negative("weight_decay", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["square_avg"] = ember.zeros_like(param)
        state["acc_delta"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, steps = self._gather(group, "square_avg", "acc_delta", "step")
            adadelta(params, grads, square_avgs, acc_deltas, steps,
                     **options(group, "lr", "rho", "eps", "weight_decay", "maximize"))
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, steps, *, lr, rho, eps, weight_decay, maximize):
    """The Adadelta update of each ``params[i]`` and its state, in place (see :class:`Adadelta`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg, acc_delta = square_avgs[i], acc_deltas[i]
        steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
