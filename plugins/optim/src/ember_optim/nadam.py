"""NAdam: Adam with Nesterov momentum, and its momentum-decay schedule.

PyTorch counterpart: torch/optim/nadam.py (v2.13), the single-tensor path.
"""

import ember
from ember_optim._checks import check_betas, check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options, value
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""NAdam: Adam that looks one momentum step ahead.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t = 1, 2, ...`::

        if maximize:            g = -g
        if weight_decay != 0:
            if decoupled_weight_decay:   theta = theta * (1 - lr * weight_decay)
            else:                        g = g + weight_decay * theta
        mu_t      = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next   = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        P = P * mu_t                                     (mu_product, the product of every mu so far)
        m = beta1 * m + (1 - beta1) * g                  (exp_avg)
        v = beta2 * v + (1 - beta2) * g * g              (exp_avg_sq)
        denom = sqrt(v / (1 - beta2 ** t)) + eps
        theta = theta - lr * (1 - mu_t) / (1 - P) * g / denom
                      - lr * mu_next / (1 - P * mu_next) * m / denom

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: decay rates of ``m`` and ``v`` (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: weight decay factor (default 0).
        momentum_decay: how fast ``mu_t`` approaches ``beta1`` (default 4e-3).
        decoupled_weight_decay: shrink the weights directly (NAdamW).
        maximize: ascend the objective instead of descending it.

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.NAdam([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3, *,
                 decoupled_weight_decay=False, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_non_negative("weight_decay", weight_decay)
        check_non_negative("momentum_decay", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["mu_product"] = ember.tensor(1.0, dtype=ember.float32)
        state["exp_avg"] = ember.zeros_like(param)
        state["exp_avg_sq"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, mu_products, steps = self._gather(
                group, "exp_avg", "exp_avg_sq", "mu_product", "step")
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps,
                  **options(group, "betas", "lr", "weight_decay", "momentum_decay", "eps", "decoupled_weight_decay",
                            "maximize"))
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps, decoupled_weight_decay, maximize):
    """The NAdam update of each ``params[i]`` and its state, in place (see :class:`NAdam`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product = exp_avgs[i], exp_avg_sqs[i], mu_products[i]
        steps[i] += 1
        step = value(steps[i])
        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)  # a float32 tensor, as in PyTorch: the rounding matches

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)

        product = value(mu_product)
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - product * mu_next))
