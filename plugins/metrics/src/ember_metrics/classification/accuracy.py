"""``Accuracy``: the fraction of right predictions, per class or over all.

PyTorch counterpart: none in torch; torchmetrics/classification/accuracy.py (``Accuracy``,
``BinaryAccuracy``, ``MulticlassAccuracy``, ``MultilabelAccuracy``) and ``_accuracy_reduce``
of torchmetrics/functional/classification/accuracy.py (torchmetrics 1.9). torchmetrics'
``Accuracy(task=...)`` builds the task's own class; ember's one class serves the three.

For multiclass, a class's accuracy is its recall, tp / (tp + fn), and "micro" accuracy
is the fraction of right samples; for binary and multilabel it is
(tp + tn) / (tp + tn + fp + fn). The averages follow NOTE [ Averaging a per-class score ]
in stat_scores.py.

>>> import ember
>>> metric = Accuracy(task="multiclass", num_classes=3)
>>> metric.update(ember.tensor([0, 2, 1, 2]), ember.tensor([0, 1, 1, 2]))
>>> float(metric.compute())
0.75
"""

from ember_metrics.classification.stat_scores import StatScores, average_scores, safe_divide


class Accuracy(StatScores):
    """Accuracy of a binary, multiclass or multilabel task (arguments: ``StatScores``)."""

    higher_is_better = True

    def compute(self):
        tp, fp, tn, fn = self.counts()
        return self._finish(accuracy_reduce(tp, fp, tn, fn, self.average, self.task == "multilabel", self.top_k))


def accuracy_reduce(tp, fp, tn, fn, average, multilabel, top_k=1):
    """Accuracy from the summed counts."""
    if average == "binary":
        return safe_divide(tp + tn, tp + tn + fp + fn)
    if average == "micro":
        if multilabel:
            return safe_divide((tp + tn).sum(), (tp + tn + fp + fn).sum())
        return safe_divide(tp.sum(), (tp + fn).sum())
    if multilabel:
        score = safe_divide(tp + tn, tp + tn + fp + fn)
    else:
        score = safe_divide(tp, tp + fn)  # a class's accuracy is its recall
    return average_scores(score, average, multilabel, tp, fp, fn, top_k)
