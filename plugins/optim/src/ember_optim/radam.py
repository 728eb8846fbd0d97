"""RAdam: Adam with a rectified warm-up of the adaptive learning rate.

PyTorch counterpart: torch/optim/radam.py (v2.13), the single-tensor path.
"""

import ember
from ember_optim._checks import check_betas, check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options, value
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""RAdam: Adam that falls back to momentum SGD while the variance estimate is unreliable.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t = 1, 2, ...`::

        if maximize:            g = -g
        if weight_decay != 0:
            if decoupled_weight_decay:   theta = theta * (1 - lr * weight_decay)
            else:                        g = g + weight_decay * theta
        m = beta1 * m + (1 - beta1) * g                  (exp_avg)
        v = beta2 * v + (1 - beta2) * g * g              (exp_avg_sq)
        m_hat = m / (1 - beta1 ** t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
        if rho_t > 5:
            r = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
            l = sqrt(1 - beta2 ** t) / (sqrt(v) + eps)
            theta = theta - lr * m_hat * l * r
        else:
            theta = theta - lr * m_hat

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: decay rates of ``m`` and ``v`` (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: weight decay factor (default 0).
        decoupled_weight_decay: shrink the weights directly (RAdamW).
        maximize: ascend the objective instead of descending it.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.RAdam([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9500, -1.9500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, *,
                 decoupled_weight_decay=False, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_non_negative("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["exp_avg"] = ember.zeros_like(param)
        state["exp_avg_sq"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, steps = self._gather(group, "exp_avg", "exp_avg_sq", "step")
            radam(params, grads, exp_avgs, exp_avg_sqs, steps,
                  **options(group, "betas", "lr", "weight_decay", "eps", "decoupled_weight_decay", "maximize"))
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, steps, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay, maximize):
    """The RAdam update of each ``params[i]`` and its state, in place (see :class:`RAdam`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        steps[i] += 1
        step = value(steps[i])

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
