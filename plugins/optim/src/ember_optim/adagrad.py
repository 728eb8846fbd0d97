"""Adagrad, with learning-rate decay, weight decay and an initial accumulator value.

PyTorch counterpart: torch/optim/adagrad.py (v2.13): the single-tensor dense loop here,
the ``foreach=True`` and ``fused=True`` paths in fused_adagrad.py (NOTE [ foreach and
fused, on NumPy ] in fused.py). ember has no sparse gradients.
"""

import ember
from ember_optim._checks import check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options, value
from ember_optim.fused import check_flags, choose_path
from ember_optim.fused_adagrad import foreach_adagrad, fused_adagrad
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad: each coordinate's step shrinks with the sum of its squared gradients.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t = 1, 2, ...`::

        if maximize:            g = -g
        if weight_decay != 0:   g = g + weight_decay * theta
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                                  (sum, starts at initial_accumulator_value)
        theta = theta - clr * g / (sqrt(s) + eps)

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: the starting value of ``s`` (default 0).
        eps: added to the denominator (default 1e-10).
        foreach: update each parameter with one array call per line (torch's
            multi-tensor path); False: the single-tensor loop. None (the default) runs the
            fused path for float32 and float64 parameters on the cpu backend: **ember
            differs from PyTorch here on purpose**. PyTorch's CPU default is the
            single-tensor loop; ember's kernels give bit-identical parameters and state in
            less time (NOTE [ ember's default is the fused path ] in fused.py).
        maximize: ascend the objective instead of descending it.
        fused: update each parameter in blocks (torch's fused kernel).

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.Adagrad([w], lr=0.1)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, fused=None):
        check_lr(lr)
        check_non_negative("lr_decay", lr_decay)
        check_non_negative("weight_decay", weight_decay)
        check_non_negative("initial_accumulator_value", initial_accumulator_value)
        check_eps(eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        fused=fused)
        super().__init__(params, defaults)
        check_flags(foreach, fused, self.param_groups)
        # Unlike the other optimizers, Adagrad's state exists from the start.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step()
                state["sum"] = ember.full_like(p, group["initial_accumulator_value"])

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads, state_sums, steps = self._gather(group, "sum", "step")
            update = {"fused": fused_adagrad, "foreach": foreach_adagrad, "loop": adagrad}[
                choose_path(group, params, grads)]
            update(params, grads, state_sums, steps,
                   **options(group, "lr", "weight_decay", "lr_decay", "eps", "maximize"))
        return loss


def adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """The Adagrad update of each ``params[i]`` and its state, in place (see :class:`Adagrad`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        steps[i] += 1
        step = value(steps[i])
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sums[i].addcmul_(grad, grad, value=1)
        std = state_sums[i].sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
