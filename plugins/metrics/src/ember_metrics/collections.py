"""``MetricCollection``: several metrics updated together, their values as one dict.

PyTorch counterpart: none in torch; torchmetrics/collections.py (torchmetrics 1.9). Kept: a list (each
metric named by its class) or a dict of metrics, ``prefix``/``postfix`` on every key,
``update``/``compute``/``reset``/``forward``, ``clone(prefix=, postfix=)``, the dict
interface, and ``compute_groups``: metrics whose states are equal after the first update
(Accuracy, Precision, Recall and F1 of one task share tp/fp/tn/fn) are updated once per
group, the others' states pointing at the first one's. Given as lists of names, the
groups are taken as they are; ``True`` finds them; ``False`` updates every metric.
A metric that returns a dict (``MeanAveragePrecision``) has its keys merged in.
"""

import copy

from ember.nn import Module
from ember_metrics.metric import Metric


class MetricCollection(Module):
    """A dict of named metrics that behaves as one metric.

    Args:
        metrics: a list or tuple of metrics (keyed by class name) or a dict name -> metric.
        prefix, postfix: strings added before and after every key of the result.
        compute_groups: True (find the groups after the first update), False, or a list
            of lists of metric names.
    """

    def __init__(self, metrics, *additional_metrics, prefix=None, postfix=None, compute_groups=True):
        super().__init__()
        self.prefix, self.postfix = _check_affix(prefix, "prefix"), _check_affix(postfix, "postfix")
        self._enable_compute_groups = compute_groups
        self._groups_checked = False
        self._groups = {}
        self.add_metrics(metrics, *additional_metrics)

    def add_metrics(self, metrics, *additional_metrics):
        """Add metrics (as the constructor's ``metrics``)."""
        if isinstance(metrics, Metric):
            metrics = [metrics]
        if isinstance(metrics, (list, tuple)):
            metrics = [*metrics, *additional_metrics]
            named = {}
            for metric in metrics:
                if not isinstance(metric, Metric):
                    raise ValueError(f"Input {metric} to `MetricCollection` is not a instance of "
                                     "`torchmetrics.Metric` or `torchmetrics.MetricCollection`")
                name = type(metric).__name__
                if name in named:
                    raise ValueError(f"Encountered two metrics both named {name}")
                named[name] = metric
            metrics = named
        elif additional_metrics:
            raise ValueError(f"You have passes extra arguments {additional_metrics} which are not compatible with "
                             f"first passed dictionary {metrics} so they will be ignored.")
        for name in sorted(metrics):
            if not isinstance(metrics[name], Metric):
                raise ValueError(f"Value {metrics[name]} belonging to key {name} is not an instance of "
                                 "`torchmetrics.Metric` or `torchmetrics.MetricCollection`")
            self.add_module(name, metrics[name])
        self._init_groups()

    def _init_groups(self):
        if isinstance(self._enable_compute_groups, list):
            self._groups = dict(enumerate(self._enable_compute_groups))
            for group in self._groups.values():
                for name in group:
                    if name not in self._modules:
                        raise ValueError(f"Input {name} in `compute_groups` argument does not match a metric in the "
                                         f"collection. Please make sure that {self._enable_compute_groups} matches "
                                         f"{list(self._modules)}")
            self._groups_checked = True
        else:
            self._groups = {i: [name] for i, name in enumerate(self._modules)}
            self._groups_checked = False

    @property
    def compute_groups(self):
        return self._groups

    # --- the metric interface ----------------------------------------------------------------
    def update(self, *args, **kwargs):
        """Update each group's first metric (every metric before the groups are known)."""
        if self._groups_checked:
            for group in self._groups.values():
                self._modules[group[0]].update(*args, **kwargs)
            self._share_states()
            return
        for metric in self._modules.values():
            metric.update(*args, **kwargs)
        if self._enable_compute_groups is True:
            self._merge_groups()
            self._share_states()
            self._groups_checked = True

    def forward(self, *args, **kwargs):
        """Every metric's value on this batch (each accumulates it too)."""
        return self._flat({name: metric(*args, **kwargs) for name, metric in self._modules.items()})

    def compute(self):
        """Every metric's value on everything seen."""
        return self._flat({name: metric.compute() for name, metric in self._modules.items()})

    def reset(self):
        for metric in self._modules.values():
            metric.reset()
        if self._enable_compute_groups is True:
            self._share_states(copy_states=True)

    def clone(self, prefix=None, postfix=None):
        """A deep copy, with a new ``prefix``/``postfix`` if given."""
        collection = copy.deepcopy(self)
        collection.prefix = _check_affix(prefix, "prefix") if prefix is not None else self.prefix
        collection.postfix = _check_affix(postfix, "postfix") if postfix is not None else self.postfix
        return collection

    # --- compute groups ----------------------------------------------------------------------
    def _merge_groups(self):
        """Join the groups whose first metrics hold equal states."""
        groups = list(self._groups.values())
        merged = []
        for group in groups:
            for target in merged:
                if _same_states(self._modules[target[0]], self._modules[group[0]]):
                    target.extend(group)
                    break
            else:
                merged.append(list(group))
        self._groups = dict(enumerate(merged))

    def _share_states(self, copy_states=False):
        """Point the other metrics of a group at its first metric's states."""
        for group in self._groups.values():
            first = self._modules[group[0]]
            for name in group[1:]:
                other = self._modules[name]
                for state in first._defaults:
                    value = getattr(first, state)
                    setattr(other, state, copy.deepcopy(value) if copy_states else value)
                other._update_count = first._update_count
                other._computed = None

    # --- the dict interface ------------------------------------------------------------------
    def _key(self, name):
        return f"{self.prefix or ''}{name}{self.postfix or ''}"

    def _flat(self, results):
        flat = {}
        for name, value in results.items():
            if isinstance(value, dict):
                flat.update({self._key(key): item for key, item in value.items()})
            else:
                flat[self._key(name)] = value
        return flat

    def keys(self, keep_base=False):
        return list(self._modules) if keep_base else [self._key(name) for name in self._modules]

    def values(self):
        return list(self._modules.values())

    def items(self, keep_base=False):
        return list(zip(self.keys(keep_base), self.values()))

    def __getitem__(self, key):
        if key in self._modules:
            return self._modules[key]
        for name in self._modules:
            if self._key(name) == key:
                return self._modules[name]
        raise KeyError(key)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._modules)

    def __contains__(self, key):
        return key in self._modules or key in self.keys()


def _same_states(first, second):
    """Whether two metrics hold states of the same names and equal values."""
    if type(first._defaults) is not dict or first._defaults.keys() != second._defaults.keys():
        return False
    for name in first._defaults:
        a, b = getattr(first, name), getattr(second, name)
        if isinstance(a, list) or isinstance(b, list):
            if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
                return False
            pairs = list(zip(a, b))
        else:
            pairs = [(a, b)]
        for x, y in pairs:
            if x.shape != y.shape or x.dtype != y.dtype or not bool((x == y).all()):
                return False
    return True


def _check_affix(value, what):
    if value is not None and not isinstance(value, str):
        raise ValueError(f"Expected input `{what}` to be a string, but got {type(value)}")
    return value
