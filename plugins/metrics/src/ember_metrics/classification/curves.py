"""The exact ROC and precision-recall curves behind ``AUROC`` and ``AveragePrecision``
(``thresholds=None``: every distinct score is a threshold).

PyTorch counterpart: none in torch; ``_binary_clf_curve`` of
torchmetrics/functional/classification/precision_recall_curve.py, ``_binary_roc_compute``
of .../roc.py, ``_binary_precision_recall_curve_compute`` and the reductions
``_reduce_auroc`` / ``_reduce_average_precision`` (torchmetrics 1.9), which follow
scikit-learn's metrics/_ranking.py.

# NOTE [ Exact curves ]
# Sort the scores from the highest; at each distinct score (the last position of a run
# of equal scores) read the cumulative true positives and false positives: lowering the
# threshold past that score admits the whole run at once, so equal scores never split.
# ROC: tpr = tps / positives, fpr = fps / negatives, from (0, 0); AUROC is the trapezoid
# area (a class without positives, or without negatives, has an all-zero rate and area
# 0). Precision-recall: precision = tps / (tps + fps), recall = tps / positives, read
# from the lowest threshold up and closed with the point (recall 0, precision 1); AP is
# the step sum of precision times the rise in recall. With no positive at all recall is
# 0/0: torchmetrics sets it to 1 when every target is 0, otherwise the class's AP is
# nan, and a macro or weighted mean leaves nan classes out.
"""

import numpy as np

from ember_metrics.classification import inputs
from ember_metrics.metric import Metric, as_tensor, dim_zero_cat


def binary_clf_curve(preds, target, pos_label=1):
    """``(fps, tps, thresholds)`` at each distinct score, from the highest."""
    order = np.argsort(-preds, kind="stable")
    preds, hits = preds[order], (target[order] == pos_label).astype(np.int64)
    distinct = np.nonzero(np.diff(preds))[0]
    ends = np.append(distinct, len(preds) - 1)
    tps = np.cumsum(hits)[ends]
    return 1 + ends - tps, tps, preds[ends]


def binary_roc(preds, target, pos_label=1):
    """``(fpr, tpr)`` starting at (0, 0)."""
    fps, tps, _ = binary_clf_curve(preds, target, pos_label)
    fps, tps = np.append(0, fps).astype(np.float64), np.append(0, tps).astype(np.float64)
    fpr = fps / fps[-1] if fps[-1] > 0 else np.zeros_like(fps)
    tpr = tps / tps[-1] if tps[-1] > 0 else np.zeros_like(tps)
    return fpr, tpr


def binary_auroc(preds, target, pos_label=1):
    fpr, tpr = binary_roc(preds, target, pos_label)
    return float(np.trapezoid(tpr, fpr))


def binary_precision_recall(preds, target, pos_label=1):
    """``(precision, recall)`` from the lowest threshold up, ending at (recall 0, precision 1)."""
    fps, tps, _ = binary_clf_curve(preds, target, pos_label)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = tps / (tps + fps)
        recall = tps / tps[-1]
    if (target == 0).all():  # no positives: recall is undefined, torchmetrics reads it as 1
        recall = np.ones_like(recall)
    return np.append(precision[::-1], 1.0), np.append(recall[::-1], 0.0)


def average_precision(precision, recall):
    return float(-np.sum((recall[1:] - recall[:-1]) * precision[:-1]))


def binary_average_precision(preds, target, pos_label=1):
    """AP of one binary problem; a nan of 0 / 0 counts as 0 (torchmetrics' binary AP)."""
    precision, recall = binary_precision_recall(preds, target, pos_label)
    return average_precision(np.nan_to_num(precision, nan=0.0), np.nan_to_num(recall, nan=0.0))


def reduce_per_class(scores, average, weights):
    """Per-class AUROC or AP reduced by ``average``; nan classes left out of the means."""
    scores = np.asarray(scores, dtype=np.float64)
    if average is None or average == "none":
        return scores
    valid = ~np.isnan(scores)
    if average == "macro":
        return scores[valid].mean() if valid.any() else np.nan
    weights = np.asarray(weights, dtype=np.float64)[valid]
    total = weights.sum()
    return float((scores[valid] * (weights / total if total else 0.0)).sum())


class CurveMetric(Metric):
    """A metric of the exact curves: keeps every (probability, target) pair it is given,
    as "cat" list states, and leaves ``compute`` to its subclass.

    Args: ``task``, ``num_classes``, ``num_labels``, ``ignore_index`` as ``StatScores``;
    ``average`` (not for binary) "macro", "weighted", "none" and, for multilabel, "micro";
    ``thresholds`` must be None (the exact curve; the binned one is left out).
    """

    def __init__(self, task, num_classes=None, num_labels=None, average="macro", thresholds=None,
                 ignore_index=None, **kwargs):
        super().__init__(**kwargs)
        allowed = ("micro", "macro", "weighted", "none", None) if task == "multilabel" else \
            ("macro", "weighted", "none", None)
        inputs.check_task(task, num_classes, num_labels, average, allowed)
        if thresholds is not None:
            raise ValueError("ember-metrics computes the exact curve only: `thresholds` must be None")
        self.task, self.average, self.ignore_index = task, average, ignore_index
        self.num_classes, self.num_labels = num_classes, num_labels
        self.add_state("preds", [], dist_reduce_fx="cat")
        self.add_state("target", [], dist_reduce_fx="cat")

    def update(self, preds, target):
        """Keep one batch's probabilities (NOTE [ Probabilities or logits ]) and targets."""
        if self.task == "binary":
            preds, target = inputs.binary_scores(preds, target, self.ignore_index)
        elif self.task == "multiclass":
            preds, target = inputs.multiclass_scores(preds, target, self.num_classes, self.ignore_index)
        else:
            preds, target = inputs.multilabel_scores(preds, target, self.num_labels, self.ignore_index)
        self.preds.append(as_tensor(preds))
        self.target.append(as_tensor(target))

    # the score of one binary problem, and of one class (one-vs-rest) or label
    binary_score = class_score = None

    def compute(self):
        if self.task == "binary":
            value = self.binary_score(*self.scores())
        elif self.task == "multilabel" and self.average == "micro":
            value = self.binary_score(*self.micro_scores())
        else:
            values, weights = self.per_class(self.class_score)
            value = reduce_per_class(values, self.average, weights)
        return as_tensor(np.asarray(value, dtype=np.float32))

    def scores(self):
        """Every probability and target kept, as NumPy arrays."""
        return dim_zero_cat(self.preds).numpy(), dim_zero_cat(self.target).numpy()

    def per_class(self, score):
        """``score(preds, target, pos_label)`` of each class (one-vs-rest) or label (its
        column, ignored elements dropped), with the weights of a "weighted" mean."""
        preds, target = self.scores()
        if self.task == "multiclass":
            values = [score(preds[:, i], target, i) for i in range(self.num_classes)]
            return values, np.bincount(target, minlength=self.num_classes)
        values = []
        for i in range(self.num_labels):
            keep = target[:, i] != self.ignore_index if self.ignore_index is not None else slice(None)
            values.append(score(preds[keep, i], target[keep, i], 1))
        return values, (target == 1).sum(axis=0)

    def micro_scores(self):
        """Multilabel "micro": every (probability, target) element as one binary problem."""
        preds, target = self.scores()
        preds, target = preds.reshape(-1), target.reshape(-1)
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target = preds[keep], target[keep]
        return preds, target
