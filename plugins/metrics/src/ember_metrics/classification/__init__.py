"""Classification metrics: binary, multiclass and multilabel tasks.

PyTorch counterpart: none in torch; torchmetrics/classification/__init__.py (torchmetrics 1.9).
"""

from ember_metrics.classification.accuracy import Accuracy
from ember_metrics.classification.auroc import AUROC
from ember_metrics.classification.average_precision import AveragePrecision
from ember_metrics.classification.confusion_matrix import ConfusionMatrix
from ember_metrics.classification.f_beta import F1Score, FBetaScore
from ember_metrics.classification.precision_recall import Precision, Recall
from ember_metrics.classification.stat_scores import StatScores

__all__ = ["AUROC", "Accuracy", "AveragePrecision", "ConfusionMatrix", "F1Score", "FBetaScore", "Precision", "Recall",
           "StatScores"]
