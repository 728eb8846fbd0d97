"""Every class ember-metrics registers, by name (the hook in __init__.py imports this
only when ember first asks for the "metrics" catalogue).

PyTorch counterpart: none in torch; the names torchmetrics/__init__.py exports
(torchmetrics 1.9), for the metrics ember-metrics has.
"""

from ember_metrics.classification import (
                                          AUROC,
                                          Accuracy,
                                          AveragePrecision,
                                          ConfusionMatrix,
                                          F1Score,
                                          FBetaScore,
                                          Precision,
                                          Recall,
                                          StatScores,
)
from ember_metrics.collections import MetricCollection
from ember_metrics.detection.mean_ap import MeanAveragePrecision
from ember_metrics.metric import Metric
from ember_metrics.regression import MeanAbsoluteError, MeanSquaredError

CLASSES = (Metric, MetricCollection, Accuracy, Precision, Recall, F1Score, FBetaScore, StatScores, ConfusionMatrix,
           AUROC, AveragePrecision, MeanSquaredError, MeanAbsoluteError, MeanAveragePrecision)


def classes():
    return {cls.__name__: cls for cls in CLASSES}
