"""``AveragePrecision``: the area under the precision-recall curve as a step sum, exact.

PyTorch counterpart: none in torch; torchmetrics/classification/average_precision.py
(``AveragePrecision`` and its Binary/Multiclass/Multilabel classes) and
torchmetrics/functional/classification/average_precision.py (torchmetrics 1.9),
``thresholds=None``. AP = sum over thresholds of (R_n - R_{n-1}) P_n; a multiclass class
that never appears has a nan AP and is left out of the means (NOTE [ Exact curves ] in
curves.py).

>>> import ember
>>> metric = AveragePrecision(task="binary")
>>> metric.update(ember.tensor([0.1, 0.4, 0.35, 0.8]), ember.tensor([0, 0, 1, 1]))
>>> round(float(metric.compute()), 4)
0.8333
"""

from ember_metrics.classification.curves import (
                                                 CurveMetric,
                                                 average_precision,
                                                 binary_average_precision,
                                                 binary_precision_recall,
)


def _class_average_precision(preds, target, pos_label):
    """One class's AP, nan kept (torchmetrics' per-class reduction does not zero it)."""
    return average_precision(*binary_precision_recall(preds, target, pos_label))


class AveragePrecision(CurveMetric):
    """Average precision of a binary, multiclass or multilabel task (arguments: ``CurveMetric``)."""

    higher_is_better = True
    binary_score = staticmethod(binary_average_precision)
    class_score = staticmethod(_class_average_precision)
