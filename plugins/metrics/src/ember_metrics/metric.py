"""``Metric``: states declared with their reduction, ``update``/``compute``/``reset``,
``forward`` for one batch, and the sync of the states across ``ember.distributed`` ranks.

PyTorch counterpart: none in torch; torchmetrics/metric.py (torchmetrics 1.9). Kept: ``add_state``
(a tensor or an empty list, a ``dist_reduce_fx`` of "sum", "mean", "cat", "min", "max",
a callable or None), the update count, the cached ``compute``, ``forward`` on both of
torchmetrics' paths (``full_state_update``), ``sync``/``unsync``/``sync_context``,
persistent states in ``state_dict`` and ``to``/``float``/``double`` moving them. Left
out: compositional arithmetic (``metric_a + metric_b``), ``merge_state``, plotting,
``compute_on_cpu`` and ``dist_sync_fn``.

# NOTE [ A metric's states ]
# A state is a tensor (a running sum, a confusion matrix) or a list of tensors (every
# score seen, for AUROC), declared once by ``add_state`` with its default and how ranks
# combine it. ``reset`` puts every state back to a copy of its default; ``update`` may
# only change states, so that a metric is entirely described by them: ``forward`` can
# set the accumulated states aside, compute one batch alone and fold that batch into
# them (``_reduce_states``, by the same reductions the ranks use); a checkpoint holds
# them (``persistent``); and ``sync`` makes every rank's metric the metric of all the
# data by reducing each state over the ranks (ember_metrics/distributed.py), after
# which ``compute`` needs no change at all to give the global value.
#
# NOTE [ Wrapped update and compute ]
# torchmetrics wraps each instance's ``update`` and ``compute`` in ``__init__`` (the
# wrapper counts updates, caches the computed value, syncs and unsyncs around
# ``compute``). ember wraps them once per class, in ``__init_subclass__``, so that a
# metric holds no closures over itself (``copy.deepcopy`` and pickling need no special
# case). A wrapper called from inside another (``super().update(...)``) just runs the
# method: only the outermost call counts and syncs.
"""

import contextlib
import copy
import functools

import numpy as np

import ember
from ember.nn import Module
from ember_metrics import distributed

REDUCTIONS = ("sum", "mean", "cat", "min", "max")


class MetricsError(RuntimeError):
    """A metric used out of order (synced twice, unsynced when not synced)."""


class Metric(Module):
    """Base class of every metric: subclasses declare states in ``__init__`` with
    ``add_state`` and write ``update`` (change the states from a batch) and ``compute``
    (the value from the states).

    Args:
        dist_sync_on_step: sync the states across ranks in ``forward`` too (the batch
            value of every rank's batch together).
        process_group: the ``ember.distributed`` group to sync over (default: the world).
        sync_on_compute: sync the states before ``compute`` (default True).
    """

    full_state_update = False  # forward may compute a batch alone, then fold it in
    is_differentiable = False
    higher_is_better = None

    def __init__(self, dist_sync_on_step=False, process_group=None, sync_on_compute=True):
        super().__init__()
        self.dist_sync_on_step = dist_sync_on_step
        self.process_group = process_group
        self.sync_on_compute = sync_on_compute
        self._defaults, self._persistent, self._reductions = {}, {}, {}
        self._update_count = 0
        self._computed = None
        self._forward_cache = None
        self._cache = None  # the local states while synced
        self._is_synced = False
        self._to_sync = sync_on_compute
        self._should_unsync = True
        self._depth = 0  # NOTE [ Wrapped update and compute ]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "update" in vars(cls):
            cls.update = _wrap_update(vars(cls)["update"])
        if "compute" in vars(cls):
            cls.compute = _wrap_compute(vars(cls)["compute"])

    # --- states (NOTE [ A metric's states ]) -------------------------------------------
    def add_state(self, name, default, dist_reduce_fx=None, persistent=False):
        """Declare the state ``name``: a tensor, or an empty list (of tensors, one per
        update); ``dist_reduce_fx`` combines the ranks' values: "sum", "mean", "min",
        "max", "cat" (concatenate along dim 0), a callable given the ranks' values
        stacked, or None (the stacked values)."""
        is_list = isinstance(default, list)
        if not isinstance(default, ember.Tensor) and not (is_list and not default):
            raise ValueError("state variable must be a tensor or any empty list "
                             "(where you can append tensors)")
        if not (dist_reduce_fx in (*REDUCTIONS, None) or callable(dist_reduce_fx)):
            raise ValueError("`dist_reduce_fx` must be callable or one of "
                             "['mean', 'sum', 'cat', 'min', 'max', None]")
        if isinstance(default, ember.Tensor):
            default = default.detach()
        setattr(self, name, _copied(default))
        self._defaults[name] = _copied(default)
        self._persistent[name] = persistent
        self._reductions[name] = dist_reduce_fx

    @property
    def metric_state(self):
        """The current value of every state, by name."""
        return {name: getattr(self, name) for name in self._defaults}

    @property
    def update_count(self):
        return self._update_count

    @property
    def update_called(self):
        return self._update_count > 0

    def reset(self):
        """Every state back to its default; the cached value forgotten."""
        self._update_count = 0
        self._forward_cache = None
        self._computed = None
        for name, default in self._defaults.items():
            setattr(self, name, _copied(default))
        self._cache = None
        self._is_synced = False

    def update(self, *args, **kwargs):
        """Change the states from one batch."""
        raise NotImplementedError

    def compute(self):
        """The metric's value from the states."""
        raise NotImplementedError

    # --- one batch: forward --------------------------------------------------------------
    def forward(self, *args, **kwargs):
        """Accumulate the batch into the states and return the metric of this batch alone."""
        if self._is_synced:
            raise MetricsError("The Metric shouldn't be synced when performing ``forward``. "
                               "HINT: Did you forget to call ``unsync`` ?.")
        if self.full_state_update or self.full_state_update is None or self.dist_sync_on_step:
            self._forward_cache = self._forward_full_state_update(*args, **kwargs)
        else:
            self._forward_cache = self._forward_reduce_state_update(*args, **kwargs)
        return self._forward_cache

    def _forward_full_state_update(self, *args, **kwargs):
        """Update the accumulated states, then compute the batch on fresh states (two
        updates per batch: for metrics whose states cannot be folded together)."""
        self.update(*args, **kwargs)
        count = self._update_count
        self._to_sync = self.dist_sync_on_step
        self._should_unsync = False
        saved = {name: getattr(self, name) for name in self._defaults}
        self.reset()
        self.update(*args, **kwargs)
        batch_value = self.compute()
        for name, value in saved.items():
            setattr(self, name, value)
        self._restore_flags(count)
        return batch_value

    def _forward_reduce_state_update(self, *args, **kwargs):
        """Compute the batch on fresh states, then fold them into the accumulated ones
        (one update per batch)."""
        saved = {name: getattr(self, name) for name in self._defaults}
        count = self._update_count
        self.reset()
        self._to_sync = self.dist_sync_on_step
        self._should_unsync = False
        self.update(*args, **kwargs)
        batch_value = self.compute()
        self._update_count = count + 1
        self._reduce_states(saved)
        self._restore_flags(self._update_count)
        return batch_value

    def _restore_flags(self, count):
        self._update_count = count
        self._is_synced = False
        self._should_unsync = True
        self._to_sync = self.sync_on_compute
        self._computed = None

    def _reduce_states(self, accumulated):
        """Fold this batch's states (now in ``self``) into ``accumulated``."""
        for name, before in accumulated.items():
            batch, reduction = getattr(self, name), self._reductions[name]
            if reduction == "sum":
                value = before + batch
            elif reduction == "mean":
                count = self._update_count  # (already counting this batch)
                value = ((count - 1) * before + batch).float() / count
            elif reduction == "max":
                value = ember.maximum(before, batch)
            elif reduction == "min":
                value = ember.minimum(before, batch)
            elif isinstance(before, list):
                value = before + batch
            elif reduction == "cat":
                value = ember.cat([before, batch])
            elif reduction is None:
                value = ember.stack([before, batch])
            else:
                value = reduction(ember.stack([before, batch]))
            setattr(self, name, value)

    # --- across ranks -------------------------------------------------------------------
    def sync(self, process_group=None, should_sync=True, distributed_available=None):
        """Replace every state by its reduction over the ranks (the local states are
        kept for ``unsync``); nothing happens outside a multi-rank job."""
        if self._is_synced and should_sync:
            raise MetricsError("The Metric has already been synced.")
        available = (distributed_available or distributed.is_distributed)()
        if not should_sync or not available:
            return
        self._cache = {name: _copied(getattr(self, name)) for name in self._defaults}
        group = process_group or self.process_group
        for name, reduction in self._reductions.items():
            value = getattr(self, name)
            setattr(self, name, distributed.reduce_state(value, reduction, group))
        self._is_synced = True

    def unsync(self, should_unsync=True):
        """Put the local states back after ``sync``."""
        if not should_unsync:
            return
        if not self._is_synced:
            raise MetricsError("The Metric has already been un-synced.")
        if self._cache is None:
            raise MetricsError("The internal cache should exist to unsync the Metric.")
        for name, value in self._cache.items():
            setattr(self, name, value)
        self._is_synced = False
        self._cache = None

    @contextlib.contextmanager
    def sync_context(self, process_group=None, should_sync=True, should_unsync=True, distributed_available=None):
        """``sync`` on entry, ``unsync`` on exit."""
        self.sync(process_group=process_group, should_sync=should_sync, distributed_available=distributed_available)
        try:
            yield
        finally:
            self.unsync(should_unsync=self._is_synced and should_unsync)

    # --- state dict and devices ---------------------------------------------------------
    def persistent(self, mode=False):
        """Make every state persistent (in ``state_dict``) or not."""
        for name in self._persistent:
            self._persistent[name] = mode

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, persistent in self._persistent.items():
            if persistent:
                value = getattr(self, name)
                destination[prefix + name] = _copied(value) if not keep_vars else value

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for name in self._defaults:
            key = prefix + name
            if key in state_dict:
                setattr(self, name, state_dict.pop(key))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _apply(self, fn):
        """Apply ``fn`` to the states and their defaults too (``to``, ``double``, ...)."""
        super()._apply(fn)
        for name, default in self._defaults.items():
            self._defaults[name] = _mapped(fn, default)
            setattr(self, name, _mapped(fn, getattr(self, name)))
        if self._cache is not None:
            self._cache = {name: _mapped(fn, value) for name, value in self._cache.items()}
        self._computed = None
        return self

    def clone(self):
        """A deep copy of the metric."""
        return copy.deepcopy(self)

    def extra_repr(self):
        return ""


def _copied(value):
    if isinstance(value, list):
        return [item.clone() for item in value]
    return value.clone()


def _mapped(fn, value):
    if isinstance(value, list):
        return [fn(item) for item in value]
    return fn(value)


def _wrap_update(update):
    """NOTE [ Wrapped update and compute ]: count the update, forget the cached value."""
    @functools.wraps(update)
    def wrapped(self, *args, **kwargs):
        if self._depth:
            return update(self, *args, **kwargs)
        self._computed = None
        self._update_count += 1
        self._depth += 1
        try:
            with ember.no_grad():
                return update(self, *args, **kwargs)
        finally:
            self._depth -= 1

    return wrapped


def _wrap_compute(compute):
    """NOTE [ Wrapped update and compute ]: sync the states, compute, unsync; the value
    is cached until the next update."""
    @functools.wraps(compute)
    def wrapped(self):
        if self._depth:
            return compute(self)
        if self._update_count == 0:
            _warn_no_update(self)
        if self._computed is not None:
            return self._computed
        self._depth += 1
        try:
            with self.sync_context(should_sync=self._to_sync,
                                   should_unsync=self._should_unsync):
                value = compute(self)
        finally:
            self._depth -= 1
        self._computed = value
        return value

    return wrapped


def _warn_no_update(metric):
    import warnings

    warnings.warn(f"The ``compute`` method of metric {type(metric).__name__} was called before the ``update``"
                  " method which may lead to errors, as metric states have not yet been updated.",
                  UserWarning, stacklevel=3)


def dim_zero_cat(value):
    """A list state (or a tensor) as one tensor, concatenated along dim 0."""
    if isinstance(value, ember.Tensor):
        return value
    if not value:
        raise ValueError("No samples to concatenate")
    return ember.cat([item.reshape(1) if item.ndim == 0 else item for item in value])


def as_numpy(value, dtype=None):
    """An ember tensor (or anything NumPy reads) as a NumPy array."""
    if isinstance(value, ember.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=dtype)


def as_tensor(array):
    """A NumPy array (or scalar) as an ember tensor that owns a copy of it."""
    return ember.from_numpy(np.array(array))
