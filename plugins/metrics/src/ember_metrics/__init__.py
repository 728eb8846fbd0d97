"""ember-metrics: metrics after torchmetrics' design (``Metric``, ``MetricCollection``).

PyTorch counterpart: none in torch; torchmetrics/__init__.py (torchmetrics 1.9), a separate package
beside PyTorch as this is a separate distribution beside ember-core.

=========================  ==============================================================
file                       what
=========================  ==============================================================
metric.py                  ``Metric``: add_state, update/compute/reset, forward, sync
distributed.py             a state reduced over the ranks (all_reduce, all_gather)
collections.py             ``MetricCollection``: prefix/postfix, compute groups
classification/            Accuracy, Precision, Recall, F1Score, ConfusionMatrix, AUROC,
                           AveragePrecision (binary, multiclass, multilabel)
regression.py              MeanSquaredError, MeanAbsoluteError
detection/mean_ap.py       MeanAveragePrecision (COCO's bbox mAP and mAR)
=========================  ==============================================================

The hook below registers every metric class in ember's "metrics" catalogue, where
``ember.metrics.<Name>`` finds it; the trainer's ``--metrics accuracy,f1`` reads the
short names registered with them (``short``, and the ``options`` the short name means).
"""

import importlib

from ember.plugins import hookimpl

__version__ = "0.1.0"

# class name -> (short name for `ember train --metrics`, the options that name means)
SHORT_NAMES = {
    "Accuracy": ("accuracy", {"average": "micro"}),
    "Precision": ("precision", {"average": "macro"}),
    "Recall": ("recall", {"average": "macro"}),
    "F1Score": ("f1", {"average": "macro"}),
    "AUROC": ("auroc", {"average": "macro"}),
    "AveragePrecision": ("average_precision", {"average": "macro"}),
}


def __getattr__(name):
    """The metric classes, imported on first use (the hook runs at plugin discovery)."""
    if name.startswith("__"):
        raise AttributeError(f"module 'ember_metrics' has no attribute '{name}'")
    classes = importlib.import_module("ember_metrics.catalogue").classes()
    if name in classes:
        return classes[name]
    raise AttributeError(f"module 'ember_metrics' has no attribute '{name}'")


@hookimpl
def ember_register_metrics(register):
    for name, cls in importlib.import_module("ember_metrics.catalogue").classes().items():
        short = SHORT_NAMES.get(name)
        if short is None:
            register(cls, name=name)
        else:
            register(cls, name=name, short=short[0], options=short[1])
