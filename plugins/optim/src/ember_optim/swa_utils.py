"""Weight averaging: stochastic weight averaging (SWA) and exponential moving averages (EMA).

PyTorch counterpart: torch/optim/swa_utils.py (v2.13). ember updates the averages one
tensor at a time (PyTorch's CPU path); the ``multi_avg_fn`` forms receive the tensors
grouped by device and dtype, as in PyTorch, and update them in place.

Typical use::

    swa_model = AveragedModel(model)                      # or multi_avg_fn=get_ema_multi_avg_fn(0.999)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    update_bn(loader, swa_model)                          # recompute BatchNorm statistics
"""

import itertools
import math
from copy import deepcopy

import ember
from ember.nn import Module
from ember_optim.lr_scheduler.scheduler import LRScheduler, format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of lists of tensors: ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_params, current_params, num_averaged):
        with ember.no_grad():
            for p_ema, p_model in zip(ema_params, current_params, strict=True):
                if p_ema.is_floating_point():
                    p_ema.lerp_(p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running-mean update of lists of tensors: ``avg += (current - avg) / (n + 1)``."""

    def swa_update(averaged_params, current_params, num_averaged):
        with ember.no_grad():
            for p_avg, p_model in zip(averaged_params, current_params, strict=True):
                if p_avg.is_floating_point():
                    p_avg.lerp_(p_model, float(1 / (num_averaged + 1)))
                else:
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA of one tensor, returned (not in place): ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with ember.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor, returned: ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with ember.no_grad():
            return (averaged_param
                    + (current_param - averaged_param) / (num_averaged + 1))

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are an average of ``model``'s over time.

    Args:
        model: the model to average; it is deep-copied.
        device: where to keep the copy (default: where the model is).
        avg_fn: ``avg_fn(averaged, current, num_averaged) -> new averaged`` for one tensor.
        multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, num_averaged)``, in place.
            Without either, the plain mean of every model seen (SWA).
        use_buffers: average the buffers too (e.g. BatchNorm's running statistics);
            otherwise they are copied from ``model`` at each update.

    >>> import ember
    >>> model = ember.nn.Linear(1, 1, bias=False)
    >>> averaged = ember.optim.swa_utils.AveragedModel(model)
    >>> for value in (1.0, 2.0, 6.0):
    ...     with ember.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     averaged.update_parameters(model)
    >>> averaged.module.weight.item(), averaged.n_averaged.item()
    (3.0, 3)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into
        the average."""
        if self.use_buffers:
            averaged = list(itertools.chain(self.module.parameters(),
                                            self.module.buffers()))
            current = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            averaged = list(self.parameters())
            current = list(model.parameters())
        averaged = [p.detach() for p in averaged]
        current = [p.detach().to(a.device) for a, p in zip(averaged, current)]
        with ember.no_grad():
            if int(self.n_averaged) == 0:  # the first model is copied as it is
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(p_model)
            else:
                self._average(averaged, current)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(),
                                          strict=True):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)

    def _average(self, averaged, current):
        if self.avg_fn is not None:
            for p_avg, p_model in zip(averaged, current, strict=True):
                p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))
            return
        multi_avg_fn = self.multi_avg_fn
        for device, group_averaged, group_current in _grouped(averaged, current):
            n_averaged = self.n_averaged.to(device)
            if multi_avg_fn is not None:
                multi_avg_fn(group_averaged, group_current, n_averaged)
            else:
                swa = get_swa_avg_fn()
                for p_avg, p_model in zip(group_averaged, group_current, strict=True):
                    p_avg.copy_(swa(p_avg, p_model, n_averaged))


def _grouped(averaged, current):
    """``(device, averaged_list, current_list)`` per (device, dtype), in first-seen order."""
    groups = {}
    for p_avg, p_model in zip(averaged, current):
        key = (str(p_avg.device), p_avg.dtype)
        entry = groups.setdefault(key, (p_avg.device, [], []))
        entry[1].append(p_avg)
        entry[2].append(p_model)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Recompute the BatchNorm running statistics of ``model`` with one pass over
    ``loader``.

    Each BatchNorm's statistics are reset and averaged over the whole pass (momentum
    None); the model's training flag and the momenta are restored afterwards. A batch
    that is a list or tuple contributes its first element.
    """
    batch_norms = _batch_norms(model)
    if not batch_norms:
        return
    momenta = {}
    for module in batch_norms:
        module.reset_running_stats()
        momenta[module] = module.momentum
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with ember.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _batch_norms(model):
    try:
        from ember_norm.batchnorm import _BatchNorm
    except ImportError:  # without ember-norm there is no BatchNorm to update
        return []
    return [m for m in model.modules() if isinstance(m, _BatchNorm)]


class SWALR(LRScheduler):
    """Anneal each group's rate to ``swa_lr`` over ``anneal_epochs`` epochs (``cos`` or
    ``linear``), then hold it there; used during the SWA phase of training."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t):
        """How far along the annealing (0 to 1) the fraction ``t`` of the epochs has
        moved."""
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # Undo the previous step's interpolation to recover the rate it started from.
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous_alpha = self.anneal_func(max(0, min(1, (step - 1)
                                                     / max(1, self.anneal_epochs))))
        previous_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], previous_alpha)
                        for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, previous_lrs,
                                     strict=True)]
