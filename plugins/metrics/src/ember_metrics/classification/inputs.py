"""The three classification tasks' inputs, checked and brought to one shape.

PyTorch counterpart: none in torch; the ``_*_arg_validation``, ``_*_tensor_validation`` and ``_*_format``
functions of torchmetrics/functional/classification/stat_scores.py and
precision_recall_curve.py, and ``normalize_logits_if_needed`` of
torchmetrics/utilities/compute.py (torchmetrics 1.9).

# NOTE [ Probabilities or logits ]
# A metric takes what a model gives: probabilities, or logits. As torchmetrics, a
# floating-point batch with any value outside [0, 1] is taken as logits and turned into
# probabilities (sigmoid per element for binary and multilabel, softmax over the class
# dim for multiclass); a batch inside [0, 1] is taken as probabilities as it is. The
# test is per batch (per ``update``): a batch of logits that all happen to lie inside
# [0, 1] is read as probabilities, as torchmetrics reads it. The arithmetic stays in the
# input's dtype, so that float32 scores tie (or not) exactly as torchmetrics' do.
#
# Extra dimensions (``(N, C, H, W)`` segmentation scores) are flattened into the sample
# dimension (torchmetrics' multidim_average "global"; "samplewise" is left out).
# ``ignore_index`` drops the samples (multilabel: the elements) whose target equals it.
"""

import numpy as np

from ember_metrics.metric import as_numpy

TASKS = ("binary", "multiclass", "multilabel")
AVERAGES = ("micro", "macro", "weighted", "none", None)


def check_task(task, num_classes, num_labels, average=None, allowed_average=AVERAGES):
    """Refuse an unknown task, a missing class count or an unknown average, in torchmetrics' words."""
    if task not in TASKS:
        raise ValueError(f"Invalid Classification: expected one of ('binary', 'multiclass', 'multilabel') but got "
                         f"{task}")
    if task == "multiclass" and not (isinstance(num_classes, int) and num_classes >= 2):
        raise ValueError(f"Expected argument `num_classes` to be an integer larger than 1, but got {num_classes}")
    if task == "multilabel" and not (isinstance(num_labels, int) and num_labels >= 2):
        raise ValueError(f"Expected argument `num_labels` to be an integer larger than 1, but got {num_labels}")
    if task != "binary" and average not in allowed_average:
        raise ValueError(f"Expected argument `average` to be one of {allowed_average}, but got {average}")


def normalize_logits_if_needed(scores, normalization):
    """NOTE [ Probabilities or logits ]: ``scores`` as probabilities."""
    if scores.size == 0 or ((scores >= 0) & (scores <= 1)).all():
        return scores
    if normalization == "sigmoid":
        one = scores.dtype.type(1)
        return one / (one + np.exp(-scores))
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _float(value):
    array = as_numpy(value)
    return array if array.dtype.kind == "f" else array.astype(np.float32)


def _check_targets(target, allowed, ignore_index, what="target"):
    values = np.unique(target)
    bad = [v for v in values.tolist() if v not in allowed and v != ignore_index]
    if bad:
        expected = sorted(set(allowed)) + ([ignore_index] if ignore_index is not None else [])
        raise RuntimeError(f"Detected the following values in `{what}`: {values.tolist()} but expected only the "
                           f"following values {expected}.")


def _check_shapes(preds, target):
    if preds.shape != target.shape:
        raise RuntimeError(f"Predictions and targets are expected to have the same shape, but got {preds.shape} "
                           f"and {target.shape}.")


def _check_multilabel(preds, target, num_labels, ignore_index):
    _check_shapes(preds, target)
    if preds.ndim < 2 or preds.shape[1] != num_labels:
        raise ValueError(f"Expected both `target.shape[1]` and `preds.shape[1]` to be equal to the number of labels "
                         f"but got {preds.shape[1] if preds.ndim > 1 else None} and expected {num_labels}")
    _check_targets(target, (0, 1), ignore_index)


def binary_labels(preds, target, threshold, ignore_index):
    """Flat 0/1 predictions and targets of a binary batch, ignored samples dropped."""
    preds, target = as_numpy(preds), as_numpy(target).astype(np.int64)
    _check_shapes(preds, target)
    _check_targets(target, (0, 1), ignore_index)
    if preds.dtype.kind == "f":
        preds = normalize_logits_if_needed(preds, "sigmoid") > threshold
    preds, target = preds.reshape(-1).astype(np.int64), target.reshape(-1)
    keep = target != ignore_index if ignore_index is not None else slice(None)
    return preds[keep], target[keep]


def multiclass_labels(preds, target, num_classes, top_k, ignore_index):
    """Flat predicted labels and targets of a multiclass batch, ignored samples dropped.

    With ``top_k`` > 1 the predicted label is the target when the target is among the
    ``top_k`` highest scores, the highest-scored class otherwise (torchmetrics'
    ``_refine_preds_oh``): a sample counts as right when any of its top k is.
    """
    target = as_numpy(target).astype(np.int64)
    scores = as_numpy(preds)
    if scores.ndim == target.ndim + 1:
        if scores.shape[1] != num_classes:
            raise ValueError("If `preds` have one dimension more than `target`, `preds.shape[1]` should be equal to "
                             "number of classes.")
        scores = np.moveaxis(scores, 1, -1).reshape(-1, num_classes)
    elif top_k != 1:
        raise ValueError(f"If `top_k` is larger than 1, `preds` must be scores with one dimension more than "
                         f"`target`, but got `preds` with shape {scores.shape}")
    else:
        _check_shapes(scores, target)
        _check_targets(scores.astype(np.int64), range(num_classes), None, "preds")
    _check_targets(target, range(num_classes), ignore_index)
    target = target.reshape(-1)
    keep = target != ignore_index if ignore_index is not None else slice(None)
    scores, target = scores[keep], target[keep]
    if scores.ndim == 1:
        return scores.astype(np.int64), target
    if top_k == 1:
        return scores.argmax(axis=1), target
    best = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
    hit = (best == target[:, None]).any(axis=1)
    return np.where(hit, target, best[:, 0]), target


def multilabel_labels(preds, target, num_labels, threshold, ignore_index):
    """``(M, num_labels)`` 0/1 predictions and targets of a multilabel batch; an ignored
    element's target becomes -1 (counted nowhere)."""
    preds, target = as_numpy(preds), as_numpy(target).astype(np.int64)
    _check_multilabel(preds, target, num_labels, ignore_index)
    if preds.dtype.kind == "f":
        preds = normalize_logits_if_needed(preds, "sigmoid") > threshold
    preds = np.moveaxis(preds, 1, -1).reshape(-1, num_labels).astype(np.int64)
    target = np.moveaxis(target, 1, -1).reshape(-1, num_labels)
    if ignore_index is not None:
        target = np.where(target == ignore_index, -1, target)
    return preds, target


def binary_scores(preds, target, ignore_index):
    """Flat probabilities and targets of a binary batch (for the curves), ignored samples dropped."""
    preds, target = _float(preds), as_numpy(target).astype(np.int64)
    _check_shapes(preds, target)
    _check_targets(target, (0, 1), ignore_index)
    preds, target = preds.reshape(-1), target.reshape(-1)
    if ignore_index is not None:
        keep = target != ignore_index
        preds, target = preds[keep], target[keep]
    return normalize_logits_if_needed(preds, "sigmoid"), target


def multiclass_scores(preds, target, num_classes, ignore_index):
    """``(M, C)`` probabilities and flat targets of a multiclass batch, ignored samples dropped."""
    preds, target = _float(preds), as_numpy(target).astype(np.int64)
    if preds.ndim != target.ndim + 1 or preds.shape[1] != num_classes:
        raise ValueError(f"Expected `preds` to have one more dimension than `target` with `preds.shape[1]` equal to "
                         f"num_classes={num_classes}, but got {preds.shape} and {target.shape}")
    _check_targets(target, range(num_classes), ignore_index)
    preds = np.moveaxis(preds, 1, -1).reshape(-1, num_classes)
    target = target.reshape(-1)
    if ignore_index is not None:
        keep = target != ignore_index
        preds, target = preds[keep], target[keep]
    return normalize_logits_if_needed(preds, "softmax"), target


def multilabel_scores(preds, target, num_labels, ignore_index):
    """``(M, L)`` probabilities and targets of a multilabel batch (ignored elements kept:
    the curves drop them label by label)."""
    preds, target = _float(preds), as_numpy(target).astype(np.int64)
    _check_multilabel(preds, target, num_labels, ignore_index)
    preds = np.moveaxis(preds, 1, -1).reshape(-1, num_labels)
    target = np.moveaxis(target, 1, -1).reshape(-1, num_labels)
    return normalize_logits_if_needed(preds, "sigmoid"), target
