"""The metrics ``ember train`` and ``ember eval`` report beside the task's own:
``--metrics accuracy,f1``.

PyTorch counterpart: none in torch; the shape of a Lightning ``validation_step`` that
updates a torchmetrics ``MetricCollection`` and logs ``compute()`` at the epoch's end. The
metrics come from ember's "metrics" catalogue (``ember.metrics``, filled by ember-metrics),
by the short names registered with them (``ember_register_metrics``: ``short`` and the
``options`` the name means, such as F1's macro average); the trainer never imports the
plugin.

# NOTE [ Metrics of a validation ]
# ``--metrics`` is a run option (saved with the run's config, so ``--resume`` keeps it).
# The loop wraps the model's task in ``MetricsTask``, whose ``evaluate`` hands the
# task's own evaluation a fresh collection of the chosen metrics; the classification
# task updates it with each batch's logits and targets and adds ``compute()``'s values
# to its result (``loss``, ``accuracy``, ...), so they reach the epoch line,
# ``metrics.json`` and ``ember eval``'s output. The collection is built at the first
# batch, when the logits give the number of classes. It is not synced: in a
# data-parallel run (``--nproc``) every rank validates on the whole split. Only a task
# whose ``evaluate`` takes ``metrics`` (the core's classification task) can report
# them; for others ``--metrics`` is refused before training starts, in one line.
"""

import inspect

from ember.zoo.errors import ZooError


def parse_metrics(text):
    """``"accuracy,f1"`` -> ``["accuracy", "f1"]``, each a short name some plugin registered;
    an unknown name is a ZooError naming the known ones."""
    if text is None:
        return None
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    known = registered()
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        what = f"unknown metric {unknown[0]!r}" if unknown else "--metrics names no metric"
        raise ZooError(f"{what}; choose from {', '.join(sorted(known)) or 'none (install ember-metrics)'}")
    return names


def registered():
    """Short name -> (metric class, the options that name means), from the "metrics" catalogue."""
    from ember.plugins import registry

    known = {}
    for entry in registry.catalogue("metrics").values():
        short = entry.extra.get("short")
        if short:
            known[short] = (entry.obj, dict(entry.extra.get("options") or {}))
    return known


class LazyMetrics:
    """The chosen metrics, built at the first batch for the classes its logits have."""

    def __init__(self, names):
        self.names = names
        self.metrics = None

    def update(self, logits, targets):
        if self.metrics is None:
            known = registered()
            # every rank of a data-parallel run validates on the whole split: nothing to sync
            self.metrics = {name: known[name][0](task="multiclass", num_classes=int(logits.shape[1]),
                                                 sync_on_compute=False, **known[name][1])
                            for name in self.names}
        for metric in self.metrics.values():
            metric.update(logits, targets)

    def compute(self):
        """Each metric's value as a float (nothing before the first batch)."""
        if self.metrics is None:
            return {}
        return {name: float(metric.compute()) for name, metric in self.metrics.items()}


class MetricsTask:
    """A task whose evaluation also reports ``names`` (NOTE [ Metrics of a validation ])."""

    def __init__(self, task, names, model_name=None):
        if "metrics" not in inspect.signature(task.evaluate).parameters:
            raise ZooError(f"--metrics applies to classification models; {model_name or 'this model'}'s "
                           f"{task.name} task reports its own ({task.metric}, ...)")
        self.task, self.names = task, names

    def __getattr__(self, name):
        return getattr(self.task, name)

    def evaluate(self, model, loader):
        return self.task.evaluate(model, loader, metrics=LazyMetrics(self.names))
