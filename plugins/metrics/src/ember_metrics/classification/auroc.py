"""``AUROC``: the area under the ROC curve, exact (every distinct score a threshold).

PyTorch counterpart: none in torch; torchmetrics/classification/auroc.py (``AUROC``, ``BinaryAUROC``,
``MulticlassAUROC``, ``MultilabelAUROC``) and torchmetrics/functional/classification/auroc.py
(torchmetrics 1.9), ``thresholds=None``; ``max_fpr`` (the partial area) is left out.
Multiclass is one-vs-rest per class; a class without samples has area 0 and, in the
"weighted" mean, weight 0 (NOTE [ Exact curves ] in curves.py).

>>> import ember
>>> metric = AUROC(task="binary")
>>> metric.update(ember.tensor([0.1, 0.4, 0.35, 0.8]), ember.tensor([0, 0, 1, 1]))
>>> float(metric.compute())
0.75
"""

from ember_metrics.classification.curves import CurveMetric, binary_auroc


class AUROC(CurveMetric):
    """Area under the ROC curve of a binary, multiclass or multilabel task (arguments: ``CurveMetric``)."""

    higher_is_better = True
    binary_score = class_score = staticmethod(binary_auroc)
