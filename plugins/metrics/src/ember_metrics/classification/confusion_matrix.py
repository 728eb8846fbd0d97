"""``ConfusionMatrix``: counts of (true class, predicted class) pairs.

PyTorch counterpart: none in torch; torchmetrics/classification/confusion_matrix.py and
``_confusion_matrix_reduce`` of torchmetrics/functional/classification/confusion_matrix.py
(torchmetrics 1.9). Rows are the true class, columns the predicted one: (2, 2) for
binary, (C, C) for multiclass (scores are read by their argmax), (L, 2, 2) for
multilabel (one binary matrix per label). ``normalize`` divides by the row sums
("true"), the column sums ("pred") or the whole ("all"); an empty row or column reads 0.

>>> import ember
>>> metric = ConfusionMatrix(task="multiclass", num_classes=3)
>>> metric.update(ember.tensor([0, 2, 1, 2]), ember.tensor([0, 1, 1, 2]))
>>> metric.compute().tolist()
[[1, 0, 0], [0, 1, 1], [0, 0, 1]]
"""

import numpy as np

import ember
from ember_metrics.classification import inputs
from ember_metrics.metric import Metric, as_tensor

NORMALIZE = ("true", "pred", "all", "none", None)


class ConfusionMatrix(Metric):
    """The confusion matrix of a binary, multiclass or multilabel task.

    Args: ``task``, ``num_classes``, ``num_labels``, ``threshold``, ``ignore_index`` as
    ``StatScores``; ``normalize``: "true", "pred", "all" or None/"none".
    """

    def __init__(self, task, num_classes=None, num_labels=None, threshold=0.5, normalize=None, ignore_index=None,
                 **kwargs):
        super().__init__(**kwargs)
        inputs.check_task(task, num_classes, num_labels)
        if normalize not in NORMALIZE:
            raise ValueError(f"Argument `normalize` needs to one of the following: {NORMALIZE}")
        self.task, self.threshold, self.normalize, self.ignore_index = task, threshold, normalize, ignore_index
        self.num_classes, self.num_labels = num_classes, num_labels
        shape = {"binary": (2, 2), "multiclass": (num_classes, num_classes), "multilabel": (num_labels, 2, 2)}[task]
        self.add_state("confmat", ember.zeros(shape, dtype=ember.int64), dist_reduce_fx="sum")

    def update(self, preds, target):
        """Add one batch's (true, predicted) pairs."""
        if self.task == "binary":
            preds, target = inputs.binary_labels(preds, target, self.threshold, self.ignore_index)
            counts = _pairs(target, preds, 2)
        elif self.task == "multiclass":
            preds, target = inputs.multiclass_labels(preds, target, self.num_classes, 1, self.ignore_index)
            counts = _pairs(target, preds, self.num_classes)
        else:
            preds, target = inputs.multilabel_labels(preds, target, self.num_labels, self.threshold,
                                                     self.ignore_index)
            counts = np.stack([_pairs(target[:, i][target[:, i] >= 0], preds[:, i][target[:, i] >= 0], 2)
                               for i in range(self.num_labels)])
        self.confmat = self.confmat + as_tensor(counts)

    def compute(self):
        return as_tensor(confusion_matrix_reduce(self.confmat.numpy(), self.normalize))


def _pairs(target, preds, num_classes):
    return np.bincount(target * num_classes + preds, minlength=num_classes ** 2).reshape(num_classes, num_classes)


def confusion_matrix_reduce(confmat, normalize):
    """``confmat`` normalized as ``normalize`` says (float32), or as it is."""
    if normalize is None or normalize == "none":
        return confmat
    axis = {"true": -1, "pred": -2, "all": (-2, -1)}[normalize]
    confmat = confmat.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        confmat = confmat / confmat.sum(axis=axis, keepdims=True)
    return np.nan_to_num(confmat, nan=0.0)
