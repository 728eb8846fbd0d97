"""The learning-rate scheduler base class and the helpers its subclasses share.

PyTorch counterpart: ``LRScheduler`` and the helper functions at the top of
torch/optim/lr_scheduler.py (v2.13). ember's learning rates are Python numbers (no
tensor ``lr``), and ember leaves out the warning about a patched ``optimizer.step``.

# NOTE [ How a scheduler steps ]
# A scheduler counts epochs in ``last_epoch`` (-1 before the first step). Creating one
# records each group's starting rate as ``group["initial_lr"]`` (``base_lrs``) and
# takes a first step, to epoch 0, with ``_is_initial`` set. Each ``step()`` then adds
# one to ``last_epoch``, asks ``get_lr()`` for the new rates and writes them into the
# optimizer's groups. Most ``get_lr`` are recursive, like PyTorch's: the new rate is
# computed from the group's current ``lr`` (StepLR multiplies by ``gamma`` every
# ``step_size`` epochs), so schedulers chained on one optimizer compose. A few also
# have a closed form (``_get_closed_form_lr``), used when ``step(epoch)`` jumps to an
# epoch. Floating-point results equal PyTorch's exactly because the arithmetic is the
# same, in the same order.
"""

import warnings

from ember_optim.optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available. Please open an issue if "
    "you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


class LRScheduler:
    """Base class of the learning-rate schedulers (see NOTE [ How a scheduler steps ]).

    Args:
        optimizer: the optimizer whose groups' ``lr`` this scheduler sets.
        last_epoch: the index of the last epoch; -1 starts afresh. A resumed scheduler
            (``last_epoch >= 0``) needs ``initial_lr`` in every group.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in "
                                   f"param_groups[{i}] when resuming scheduler with "
                                   "last_epoch >= 0.")
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The step to epoch 0 that every scheduler takes when it is created."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The learning rates for ``last_epoch``, one per parameter group (subclasses)."""
        raise NotImplementedError

    def get_last_lr(self):
        """The learning rates the last ``step`` set."""
        return self._last_lr

    def step(self, epoch=None):
        """Advance one epoch (or, deprecated, jump to ``epoch``) and set the new rates."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
                          "later, you should call them in the opposite order: `optimizer.step()` before "
                          "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
                          "value of the learning rate schedule. See more details at "
                          "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                          UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")

    def state_dict(self):
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore the attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)


def check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def group_values(optimizer, key):
    """``[group[key] for each parameter group]``."""
    return [group[key] for group in optimizer.param_groups]


def format_param(name, optimizer, param):
    """One value per parameter group: a list or tuple of the right length, or one value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def set_momentum(group, use_beta1, momentum):
    """Write a cycled momentum: into ``betas[0]`` for Adam-like optimizers, else ``momentum``."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def lambdas_state_dict(scheduler):
    """A state dict whose ``lr_lambdas`` keep only callable objects' attributes
    (plain functions and lambdas are not saved)."""
    import types

    state = {key: value for key, value in scheduler.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
    state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                           for fn in scheduler.lr_lambdas]
    return state


def load_lambdas_state_dict(scheduler, state_dict):
    state = dict(state_dict)
    saved = state.pop("lr_lambdas")
    scheduler.__dict__.update(state)
    for fn, attributes in zip(scheduler.lr_lambdas, saved):
        if attributes is not None:
            fn.__dict__.update(attributes)
