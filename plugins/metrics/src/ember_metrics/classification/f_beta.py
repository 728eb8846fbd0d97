"""``F1Score`` and ``FBetaScore``: the weighted harmonic mean of precision and recall,
(1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp).

PyTorch counterpart: none in torch; torchmetrics/classification/f_beta.py (``F1Score``, ``FBetaScore``)
and ``_fbeta_reduce`` of torchmetrics/functional/classification/f_beta.py (torchmetrics
1.9). As there, the macro mean leaves out the classes that never appear with top_k = 1's
rule even when ``top_k`` > 1 (NOTE [ Averaging a per-class score ] in stat_scores.py).

>>> import ember
>>> metric = F1Score(task="multiclass", num_classes=3, average="macro")
>>> metric.update(ember.tensor([0, 2, 1, 2]), ember.tensor([0, 1, 1, 2]))
>>> round(float(metric.compute()), 4)
0.7778
"""

from ember_metrics.classification.stat_scores import StatScores, average_scores, safe_divide


class FBetaScore(StatScores):
    """F-beta of a binary, multiclass or multilabel task; ``beta`` weighs recall
    (other arguments: ``StatScores``)."""

    higher_is_better = True

    def __init__(self, task, beta=1.0, **kwargs):
        if not (isinstance(beta, float) and beta > 0):
            raise ValueError(f"Expected argument `beta` to be a float larger than 0, but got {beta}.")
        super().__init__(task, **kwargs)
        self.beta = beta

    def compute(self):
        tp, fp, tn, fn = self.counts()
        return self._finish(fbeta_reduce(tp, fp, tn, fn, self.beta, self.average, self.task == "multilabel",
                                         self.zero_division))


class F1Score(FBetaScore):
    """F1 (F-beta with beta = 1) of a binary, multiclass or multilabel task."""

    def __init__(self, task, **kwargs):
        super().__init__(task, beta=1.0, **kwargs)


def fbeta_reduce(tp, fp, tn, fn, beta, average, multilabel, zero_division=0.0):
    """F-beta from the summed counts."""
    beta2 = beta ** 2
    if average in ("binary", "micro"):
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
        return safe_divide((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp, zero_division)
    score = safe_divide((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp, zero_division)
    return average_scores(score, average, multilabel, tp, fp, fn)
