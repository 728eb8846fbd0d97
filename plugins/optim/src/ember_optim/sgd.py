"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay.

PyTorch counterpart: torch/optim/sgd.py (v2.13): the single-tensor loop here, the
``foreach=True`` and ``fused=True`` paths in fused_sgd.py (NOTE [ foreach and fused, on NumPy ]
in fused.py).
A sparse gradient (``Embedding(sparse=True)``'s) takes the single-tensor loop, as in
torch. ember has no ``differentiable`` mode.
"""

import ember
from ember_optim._checks import check_lr, check_non_negative
from ember_optim._state import options
from ember_optim.fused import check_flags, choose_path
from ember_optim.fused_sgd import foreach_sgd, fused_sgd
from ember_optim.optimizer import Optimizer, optimizer_step

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`::

        if maximize:            g = -g
        if weight_decay != 0:   g = g + weight_decay * theta
        if momentum != 0:
            b = g                                        (first step)
            b = momentum * b + (1 - dampening) * g       (later steps)
            g = g + momentum * b   if nesterov   else   b
        theta = theta - lr * g

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0).
        dampening: dampening of the momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend the objective instead of descending it.
        foreach: update each parameter with one array call per line (torch's
            multi-tensor path); False: the single-tensor loop. None (the default) runs the
            fused path for float32 and float64 parameters on the cpu backend: **ember
            differs from PyTorch here on purpose**. PyTorch's CPU default is the
            single-tensor loop; ember's kernels give bit-identical parameters and buffers
            in less time (NOTE [ ember's default is the fused path ] in fused.py).
        fused: update each parameter in cache blocks (torch's fused kernel).

    >>> import ember
    >>> from ember_optim import SGD
    >>> w = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, fused=None):
        check_lr(lr)
        check_non_negative("momentum", momentum)
        check_non_negative("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, fused=fused)
        super().__init__(params, defaults)
        check_flags(foreach, fused, self.param_groups)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("fused", None)

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params, grads = self._gather(group)
            momentum_buffers = []
            if group["momentum"] != 0:
                momentum_buffers = [self.state[p].get("momentum_buffer") for p in params]
            # the default: NOTE in fused.py; only the loop reads a sparse
            # gradient, as in torch
            sparse = any(grad.is_sparse for grad in grads)
            path = "loop" if sparse else choose_path(group, params, grads)
            update = {"fused": fused_sgd, "foreach": foreach_sgd, "loop": sgd}[path]
            update(params, grads, momentum_buffers,
                   **options(group, "lr", "momentum", "dampening", "weight_decay",
                             "nesterov", "maximize"))
            if group["momentum"] != 0:
                # sgd() created the buffers of the first step: keep them in the state.
                for p, buffer in zip(params, momentum_buffers):
                    self.state[p]["momentum_buffer"] = buffer
        return loss


def sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay,
        nesterov, maximize):
    """The SGD update of each ``params[i]`` in place; ``momentum_buffers[i]`` is None on
    the first step and replaced by the new buffer (see :class:`SGD` for the
    algorithm)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if grad.is_sparse and momentum == 0 and weight_decay == 0:
            _add_sparse_(param, grad, -lr)
            continue
        if weight_decay != 0:
            # (a sparse gradient refuses it, as torch's does)
            grad = grad.add(param, alpha=weight_decay)
        if grad.is_sparse:  # a dense momentum buffer (torch's sparse one sums to it)
            grad = grad.to_dense()
        if momentum != 0:
            buffer = momentum_buffers[i]
            if buffer is None:
                buffer = grad.detach().clone()
                momentum_buffers[i] = buffer
            else:
                buffer.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buffer, alpha=momentum) if nesterov else buffer
        param.add_(grad, alpha=-lr)


def _add_sparse_(param, grad, alpha):
    """``param += alpha * grad`` for a sparse ``grad``: only its entries' rows are touched
    (repeated entries add up)."""
    from ember.native.sparse.coalesce import flatten_indices

    sparse_dim = grad.sparse_dim()
    at = ember.tensor(flatten_indices(grad._indices().numpy(), tuple(grad.shape[:sparse_dim])))
    rows = param.detach().view(-1, *param.shape[sparse_dim:])
    rows.index_add_(0, at, grad._values().detach(), alpha=alpha)
