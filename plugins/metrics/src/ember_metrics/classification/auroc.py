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

import numpy as np

from ember_metrics.classification.curves import CurveMetric, binary_auroc, reduce_per_class
from ember_metrics.metric import as_tensor


class AUROC(CurveMetric):
    """Area under the ROC curve of a binary, multiclass or multilabel task (arguments: ``CurveMetric``)."""

    higher_is_better = True

    def compute(self):
        if self.task == "binary":
            value = binary_auroc(*self.scores())
        elif self.task == "multilabel" and self.average == "micro":
            value = binary_auroc(*self.micro_scores())
        else:
            values, weights = self.per_class(binary_auroc)
            value = reduce_per_class(values, self.average, weights)
        return as_tensor(np.asarray(value, dtype=np.float32))
