"""True and false positives and negatives: the four states behind Accuracy, Precision,
Recall and F1, and the ways of averaging a per-class score.

PyTorch counterpart: none in torch; torchmetrics/classification/stat_scores.py (``_AbstractStatScores``,
``StatScores``), torchmetrics/functional/classification/stat_scores.py (the updates) and
``_safe_divide`` / ``_adjust_weights_safe_divide`` of torchmetrics/utilities/compute.py
(torchmetrics 1.9).

# NOTE [ Averaging a per-class score ]
# Each class (or label) has its own tp, fp, tn, fn, summed over every update and, in a
# multi-rank job, over the ranks ("sum" states). "micro" sums the counts over the
# classes and scores the sums; "macro" scores each class and takes the mean; "weighted"
# weights each class's score by its support (tp + fn); "none" returns the per-class
# scores. In a macro mean a multiclass class that never appears, neither in the targets
# nor in the predictions (tp + fp + fn == 0; with top_k > 1, never in the targets), is
# left out of the mean instead of counting as 0; multilabel labels always count. A
# division by zero gives ``zero_division`` (0). Binary has one class and no averaging.
# ember keeps per-class counts even for "micro" (torchmetrics keeps four scalars
# there): the sums are the same numbers.
"""

import numpy as np

import ember
from ember_metrics.classification import inputs
from ember_metrics.metric import Metric, as_tensor


class StatScores(Metric):
    """tp, fp, tn, fn of a ``task``; ``compute`` returns them as ``[tp, fp, tn, fn, support]``
    (per class unless ``average="micro"``), as torchmetrics' ``StatScores``.

    Args:
        task: "binary", "multiclass" or "multilabel".
        threshold: binary and multilabel: a probability above it is a positive.
        num_classes: multiclass: the number of classes.
        num_labels: multilabel: the number of labels.
        average: "micro", "macro", "weighted" or "none" (NOTE [ Averaging a per-class score ]).
        top_k: multiclass: a sample is right when its target is among its k best scores.
        ignore_index: target value whose samples are left out.
        zero_division: the value of a 0 / 0.
    """

    default_average = "micro"

    def __init__(self, task, threshold=0.5, num_classes=None, num_labels=None, average="__default__", top_k=1,
                 ignore_index=None, zero_division=0.0, **kwargs):
        super().__init__(**kwargs)
        average = self.default_average if average == "__default__" else average
        inputs.check_task(task, num_classes, num_labels, average)
        if task == "multiclass" and not (isinstance(top_k, int) and 1 <= top_k <= num_classes):
            raise ValueError(f"Expected argument `top_k` to be smaller than or equal to `num_classes` but got "
                             f"{top_k} and {num_classes}")
        self.task, self.threshold, self.ignore_index = task, threshold, ignore_index
        self.num_classes, self.num_labels = num_classes, num_labels
        self.average = "binary" if task == "binary" else average
        self.top_k = top_k if task == "multiclass" else 1
        self.zero_division = zero_division
        size = {"binary": (), "multiclass": (num_classes,), "multilabel": (num_labels,)}[task]
        for name in ("tp", "fp", "tn", "fn"):
            self.add_state(name, ember.zeros(size, dtype=ember.int64), dist_reduce_fx="sum")

    def update(self, preds, target):
        """Count one batch's true and false positives and negatives."""
        ignore, threshold = self.ignore_index, self.threshold
        if self.task == "binary":
            labels = inputs.binary_labels(preds, target, threshold, ignore)
            counts = _binary_counts(*labels)
        elif self.task == "multiclass":
            classes, top_k = self.num_classes, self.top_k
            labels = inputs.multiclass_labels(preds, target, classes, top_k, ignore)
            counts = _multiclass_counts(*labels, self.num_classes)
        else:
            labels = inputs.multilabel_labels(preds, target, self.num_labels, threshold,
                                              ignore)
            counts = _multilabel_counts(*labels)
        for name, count in zip(("tp", "fp", "tn", "fn"), counts):
            setattr(self, name, getattr(self, name) + as_tensor(count))

    def counts(self):
        """The four states as NumPy arrays (float64)."""
        return [getattr(self, name).numpy().astype(np.float64) for name in ("tp", "fp", "tn", "fn")]

    def compute(self):
        tp, fp, tn, fn = (getattr(self, name).numpy() for name in ("tp", "fp", "tn", "fn"))
        if self.average == "micro" and self.task != "binary":
            tp, fp, tn, fn = tp.sum(), fp.sum(), tn.sum(), fn.sum()
        return as_tensor(np.stack([tp, fp, tn, fn, tp + fn], axis=-1))

    def _finish(self, score):
        """A score as torchmetrics returns it: a float32 tensor."""
        return as_tensor(np.asarray(score, dtype=np.float32))


def _binary_counts(preds, target):
    return [((preds == 1) & (target == 1)).sum(), ((preds == 1) & (target == 0)).sum(),
            ((preds == 0) & (target == 0)).sum(), ((preds == 0) & (target == 1)).sum()]


def _multiclass_counts(preds, target, num_classes):
    """tp, fp, tn, fn per class, from the batch's confusion matrix."""
    confmat = np.bincount(target * num_classes + preds, minlength=num_classes ** 2).reshape(num_classes, num_classes)
    tp = np.diag(confmat)
    fp = confmat.sum(axis=0) - tp
    fn = confmat.sum(axis=1) - tp
    return [tp, fp, confmat.sum() - (tp + fp + fn), fn]


def _multilabel_counts(preds, target):
    """tp, fp, tn, fn per label; a target of -1 (ignored) counts nowhere."""
    return [((preds == 1) & (target == 1)).sum(axis=0), ((preds == 1) & (target == 0)).sum(axis=0),
            ((preds == 0) & (target == 0)).sum(axis=0), ((preds == 0) & (target == 1)).sum(axis=0)]


def safe_divide(num, denom, zero_division=0.0):
    """``num / denom``, with ``zero_division`` where ``denom`` is 0."""
    num, denom = np.asarray(num, dtype=np.float64), np.asarray(denom, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom != 0, num / np.where(denom != 0, denom, 1), zero_division)


def average_scores(score, average, multilabel, tp, fp, fn, top_k=1):
    """NOTE [ Averaging a per-class score ]: ``score`` of each class, averaged."""
    if average is None or average == "none":
        return score
    if average == "weighted":
        weights = tp + fn
    else:
        weights = np.ones_like(score)
        if not multilabel:
            absent = (tp + fp + fn == 0) if top_k == 1 else (tp + fn == 0)
            weights[absent] = 0.0
    return safe_divide((weights * score).sum(-1), weights.sum(-1))
