"""Schedulers driven by user functions of the epoch: LambdaLR and MultiplicativeLR.

PyTorch counterpart: ``LambdaLR`` and ``MultiplicativeLR`` in torch/optim/lr_scheduler.py (v2.13).
"""

from ember_optim.lr_scheduler.scheduler import LRScheduler, group_values, lambdas_state_dict, load_lambdas_state_dict

__all__ = ["LambdaLR", "MultiplicativeLR"]


def _per_group(optimizer, lr_lambda):
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, one function or one per parameter group.

    >>> import ember
    >>> optimizer = ember.optim.SGD([ember.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = ember.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda epoch: 1 / (epoch + 1))
    >>> for epoch in range(3):
    ...     optimizer.step()
    ...     scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self):
        """The attributes, with only callable objects' attributes of ``lr_lambdas``."""
        return lambdas_state_dict(self)

    def load_state_dict(self, state_dict):
        load_lambdas_state_dict(self, state_dict)


class MultiplicativeLR(LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` at every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]

    def state_dict(self):
        """The attributes, with only callable objects' attributes of ``lr_lambdas``."""
        return lambdas_state_dict(self)

    def load_state_dict(self, state_dict):
        load_lambdas_state_dict(self, state_dict)
