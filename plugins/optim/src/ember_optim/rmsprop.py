"""RMSprop, plain or centered, with momentum and weight decay.

PyTorch counterpart: torch/optim/rmsprop.py (v2.13): the single-tensor loop here, the
``foreach=True`` path in fused_rmsprop.py (NOTE [ foreach and fused, on NumPy ] in fused.py).
ember leaves out tensor learning rates and the capturable/differentiable modes.
"""

import ember
from ember_optim._checks import check_eps, check_lr, check_non_negative
from ember_optim._state import new_step, options
from ember_optim.fused import choose_path
from ember_optim.fused_rmsprop import foreach_rmsprop, fused_rmsprop
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""RMSprop: gradient steps divided by a running root mean square of the gradient.

    For each parameter :math:`\theta` with gradient :math:`g`::

        if maximize:            g = -g
        if weight_decay != 0:   g = g + weight_decay * theta
        v = alpha * v + (1 - alpha) * g * g              (square_avg)
        if centered:
            m = alpha * m + (1 - alpha) * g              (grad_avg)
            avg = sqrt(v - m * m) + eps
        else:
            avg = sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / avg                   (momentum_buffer)
            theta = theta - lr * b
        else:
            theta = theta - lr * g / avg

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: normalise by an estimate of the gradient's variance instead.
        maximize: ascend the objective instead of descending it.
        foreach: update each parameter with one array call per line (torch's
            multi-tensor path); False: the single-tensor loop. None (the default) runs the
            same kernel in blocks for float32 and float64 parameters on the cpu backend:
            **ember differs from PyTorch here on purpose**. PyTorch's CPU default is the
            single-tensor loop; ember's kernel gives bit-identical parameters and state in
            less time (NOTE [ ember's default is the fused path ] in fused.py).

    >>> import ember
    >>> w = ember.tensor([1.0, -2.0], requires_grad=True)
    >>> optimizer = ember.optim.RMSprop([w], lr=0.01)
    >>> w.grad = ember.tensor([0.5, -0.5])
    >>> optimizer.step()
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, *,
                 foreach=None, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_non_negative("momentum", momentum)
        check_non_negative("weight_decay", weight_decay)
        check_non_negative("alpha", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, group, param, state):
        state["step"] = new_step()
        state["square_avg"] = ember.zeros_like(param)
        if group["momentum"] > 0:
            state["momentum_buffer"] = ember.zeros_like(param)
        if group["centered"]:
            state["grad_avg"] = ember.zeros_like(param)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            momentum_buffer = "momentum_buffer" if group["momentum"] > 0 else None
            grad_avg = "grad_avg" if group["centered"] else None
            params, grads, square_avgs, steps, momentum_buffers, grad_avgs = self._gather(
                group, "square_avg", "step", momentum_buffer, grad_avg)
            update = {"fused": fused_rmsprop, "foreach": foreach_rmsprop, "loop": rmsprop}[
                choose_path(group, params, grads)]
            update(params, grads, square_avgs, grad_avgs, momentum_buffers, steps,
                   **options(group, "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"))
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, *, lr, alpha, eps, weight_decay,
            momentum, centered, maximize):
    """The RMSprop update of each ``params[i]`` and its state, in place (see :class:`RMSprop`)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)

        if momentum > 0:
            buffer = momentum_buffers[i]
            buffer.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buffer, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
