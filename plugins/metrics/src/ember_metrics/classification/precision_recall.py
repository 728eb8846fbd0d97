"""``Precision`` and ``Recall``: tp / (tp + fp) and tp / (tp + fn).

PyTorch counterpart: none in torch; torchmetrics/classification/precision_recall.py (``Precision``,
``Recall`` and their Binary/Multiclass/Multilabel classes) and ``_precision_recall_reduce``
of torchmetrics/functional/classification/precision_recall.py (torchmetrics 1.9). The
averages follow NOTE [ Averaging a per-class score ] in stat_scores.py; the default
average is "micro", as torchmetrics' task wrappers have it.

>>> import ember
>>> metric = Precision(task="binary")
>>> metric.update(ember.tensor([0.9, 0.8, 0.2, 0.7]), ember.tensor([1, 0, 0, 1]))
>>> round(float(metric.compute()), 4)
0.6667
"""

from ember_metrics.classification.stat_scores import StatScores, average_scores, safe_divide


class Precision(StatScores):
    """Precision of a binary, multiclass or multilabel task (arguments: ``StatScores``)."""

    higher_is_better = True

    def compute(self):
        tp, fp, tn, fn = self.counts()
        return self._finish(precision_recall_reduce("precision", tp, fp, tn, fn, self.average,
                                                    self.task == "multilabel", self.top_k, self.zero_division))


class Recall(StatScores):
    """Recall of a binary, multiclass or multilabel task (arguments: ``StatScores``)."""

    higher_is_better = True

    def compute(self):
        tp, fp, tn, fn = self.counts()
        return self._finish(precision_recall_reduce("recall", tp, fp, tn, fn, self.average,
                                                    self.task == "multilabel", self.top_k, self.zero_division))


def precision_recall_reduce(stat, tp, fp, tn, fn, average, multilabel, top_k=1, zero_division=0.0):
    """Precision (``stat="precision"``) or recall from the summed counts."""
    other = fp if stat == "precision" else fn  # what differs between the two
    if average == "binary":
        return safe_divide(tp, tp + other, zero_division)
    if average == "micro":
        return safe_divide(tp.sum(), (tp + other).sum(), zero_division)
    score = safe_divide(tp, tp + other, zero_division)
    return average_scores(score, average, multilabel, tp, fp, fn, top_k)
