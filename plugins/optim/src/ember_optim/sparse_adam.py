"""SparseAdam: Adam for sparse gradients (an ``Embedding(sparse=True)``'s), updating
only the rows a step's gradient names.

PyTorch counterpart: torch/optim/sparse_adam.py and torch/optim/_functional.py
(``sparse_adam``) (v2.13).
"""

import math

import ember
from ember_optim._checks import check_betas, check_eps, check_lr
from ember_optim._state import options, value
from ember_optim.optimizer import Optimizer, optimizer_step
from ember_optim.radam import RAdam

__all__ = ["SparseAdam", "sparse_adam"]


class SparseAdam(Optimizer):
    r"""Adam whose moments move only where the gradient has entries ("lazy" Adam).

    For each parameter :math:`\theta` with a sparse gradient :math:`g` (coalesced) at
    step :math:`t = 1, 2, ...`, at the positions ``g`` names and nowhere else::

        if maximize:   g = -g
        m = beta1 * m + (1 - beta1) * g                        (exp_avg)
        v = beta2 * v + (1 - beta2) * g**2                     (exp_avg_sq)
        theta = theta - lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps)

    The step counter advances for every step that gives the parameter a gradient.

    Args:
        params: dense tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: decay rates of ``m`` and ``v`` (default (0.9, 0.999)).
        eps: added to ``sqrt(v)`` (default 1e-8).
        maximize: ascend the objective instead of descending it.

    >>> import ember
    >>> table = ember.nn.Embedding(4, 2, sparse=True)
    >>> optimizer = ember.optim.SparseAdam(table.parameters(), lr=0.1)
    >>> table(ember.tensor([1])).sum().backward()
    >>> before = table.weight.detach().clone()
    >>> optimizer.step()
    >>> (table.weight.detach() != before).any(1).tolist()
    [False, True, False, False]
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for index, param in enumerate(group["params"]):
                if param.is_sparse:
                    raise ValueError(f"Sparse params at indices {[index]}: SparseAdam requires dense parameter "
                                     "tensors")

    # The step counter and the two moments, zero: the state RAdam starts from.
    _init_state = RAdam._init_state

    @optimizer_step
    def step(self, closure=None):
        """Do one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None and not param.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            params, grads, exp_avgs, exp_avg_sqs, steps = self._gather(group, "exp_avg", "exp_avg_sq", "step")
            sparse_adam(params, grads, exp_avgs, exp_avg_sqs, steps,
                        **options(group, "betas", "eps", "lr", "maximize"))
        return loss


def _positions(grad):
    """The flat position of each entry of a coalesced sparse gradient among its
    tensor's sparse positions, and how many sparse dims it has."""
    from ember.native.sparse.coalesce import flatten_indices

    sparse_dim = grad.sparse_dim()
    flat = flatten_indices(grad._indices().numpy(), tuple(grad.shape[:sparse_dim]))
    return ember.tensor(flat), sparse_dim


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, steps, *, eps, beta1, beta2, lr, maximize):
    """The SparseAdam update of each ``params[i]`` and its moments, in place, at the
    positions its sparse gradient names (see :class:`SparseAdam`)."""
    for i, param in enumerate(params):
        grad = grads[i].coalesce()
        values = grad._values() if not maximize else -grad._values()
        if values.numel() == 0:
            continue
        steps[i] += 1
        at, sparse_dim = _positions(grad)

        def rows(tensor):  # one row per sparse position, a view
            return tensor.view(-1, *tensor.shape[sparse_dim:])

        param_rows, exp_avg, exp_avg_sq = rows(param.detach()), rows(exp_avgs[i]), rows(exp_avg_sqs[i])
        m = exp_avg[at].lerp(values, 1 - beta1)
        v = exp_avg_sq[at].lerp(values * values, 1 - beta2)
        exp_avg[at] = m
        exp_avg_sq[at] = v
        step = value(steps[i])
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param_rows[at] = param_rows[at] - step_size * m / (v.sqrt() + eps)
