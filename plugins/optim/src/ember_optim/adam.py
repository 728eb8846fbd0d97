"""Adam, with AMSGrad, L2 or decoupled weight decay, and maximize.

PyTorch counterpart: torch/optim/adam.py (v2.13): the single-tensor loop here, the
``foreach=True`` and ``fused=True`` paths in fused_adam.py (NOTE [ foreach and fused, on NumPy ]
in fused.py).
ember leaves out tensor learning rates and betas, and the capturable/differentiable modes.
"""

import ember
from ember_optim._checks import check_betas, check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options, value
from ember_optim.fused import check_flags, choose_path
from ember_optim.fused_adam import foreach_adam, fused_adam
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    r"""Adam: gradient steps scaled by running averages of the gradient and its square.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t = 1, 2, ...`::

        if maximize:                 g = -g
        if weight_decay != 0:
            if decoupled_weight_decay:   theta = theta * (1 - lr * weight_decay)   (AdamW)
            else:                        g = g + weight_decay * theta
        m = beta1 * m + (1 - beta1) * g                 (exp_avg)
        v = beta2 * v + (1 - beta2) * g * g             (exp_avg_sq)
        if amsgrad:  v_max = max(v_max, v);  v_used = v_max   else   v_used = v
        denom = sqrt(v_used) / sqrt(1 - beta2 ** t) + eps
        theta = theta - lr / (1 - beta1 ** t) * m / denom

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: decay rates of the two running averages (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: weight decay factor (default 0).
        amsgrad: use the running maximum of ``v`` (the AMSGrad variant).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: shrink the weights directly, as AdamW does.
        foreach: update each parameter with one array call per line (torch's
            multi-tensor path); False: the single-tensor loop. None (the default) runs the
            fused path for float32 and float64 parameters on the cpu backend: **ember
            differs from PyTorch here on purpose**. PyTorch's CPU default is the
            single-tensor loop; ember's kernels give bit-identical parameters and state in
            less time (NOTE [ ember's default is the fused path ] in fused.py).
        fused: update each parameter in cache blocks (torch's fused kernel).

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.Adam([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, decoupled_weight_decay=False, fused=None):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_non_negative("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                        fused=fused)
        super().__init__(params, defaults)
        check_flags(foreach, fused, self.param_groups)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["exp_avg"] = ember.zeros_like(param)
        state["exp_avg_sq"] = ember.zeros_like(param)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            max_exp_avg_sq = "max_exp_avg_sq" if group["amsgrad"] else None
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = self._gather(
                group, "exp_avg", "exp_avg_sq", max_exp_avg_sq, "step")
            path = choose_path(group, params, grads)  # the default: NOTE in fused.py
            update = {"fused": fused_adam, "foreach": foreach_adam, "loop": adam}[path]
            update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                   **options(group, "betas", "amsgrad", "lr", "weight_decay", "eps", "maximize",
                             "decoupled_weight_decay"))
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize, decoupled_weight_decay=False):
    """The Adam update of each ``params[i]`` and its state, in place (see :class:`Adam`)."""
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

        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if amsgrad:
            max_exp_avg_sqs[i].copy_(ember.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
