"""ember_metrics' classification metrics against torchmetrics 1.9 on the same batches:
every task and average, probabilities, logits and labels, several updates then compute,
ignore_index, top_k, a class that never appears, extra dimensions, all-equal scores."""

import numpy as np
import pytest
import torch
import torchmetrics
from metric_cases import NUM_CLASSES, batches

import ember
import ember_metrics

STAT_METRICS = ("Accuracy", "Precision", "Recall", "F1Score")
AVERAGES = ("micro", "macro", "weighted", "none")


def task_options(task):
    return {"binary": {}, "multiclass": {"num_classes": NUM_CLASSES}, "multilabel": {"num_labels": NUM_CLASSES}}[task]


def both(name, data, **options):
    """ember's and torchmetrics' metric ``name`` after the same updates; their computed values."""
    ours, theirs = getattr(ember_metrics, name)(**options), getattr(torchmetrics, name)(**options)
    for preds, target in data:
        ours.update(ember.from_numpy(preds), ember.from_numpy(target))
        theirs.update(torch.from_numpy(preds), torch.from_numpy(target))
    return ours.compute(), theirs.compute()


def assert_same(data, name, **options):
    ours, theirs = both(name, data, **options)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)
    return ours


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("kind", ["probs", "logits", "labels"])
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("name", STAT_METRICS)
def test_stat_metrics_match_torchmetrics(name, task, kind, average):
    data = batches(task, kind, seed=len(name) + len(kind))
    assert_same(data, name, task=task, average=average, **task_options(task))


@pytest.mark.parametrize("ignore_index", [-1, 1])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("name", STAT_METRICS)
def test_ignore_index(name, task, average, ignore_index):
    data = batches(task, "logits", seed=3, ignore_index=ignore_index)
    assert_same(data, name, task=task, average=average, ignore_index=ignore_index, **task_options(task))


@pytest.mark.parametrize("ignore_index", [None, -1, 2])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("top_k", [2, 3])
@pytest.mark.parametrize("name", STAT_METRICS)
def test_multiclass_top_k(name, top_k, average, ignore_index):
    data = batches("multiclass", "probs", seed=top_k, ignore_index=ignore_index)
    assert_same(data, name, task="multiclass", num_classes=NUM_CLASSES, top_k=top_k, average=average,
                ignore_index=ignore_index)


@pytest.mark.parametrize("top_k", [1, 2])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS)
def test_a_class_that_never_appears(name, average, top_k):
    data = batches("multiclass", "logits", seed=11, absent_class=True)
    assert_same(data, name, task="multiclass", num_classes=NUM_CLASSES, average=average, top_k=top_k)


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("name", [*STAT_METRICS, "ConfusionMatrix", "AUROC", "AveragePrecision"])
def test_extra_dimensions_are_flattened_into_samples(name, task):
    data = batches(task, "logits", seed=5, extra_dims=(3, 2), ignore_index=-1)
    assert_same(data, name, task=task, ignore_index=-1, **task_options(task))


def test_default_averages_are_torchmetrics():
    data = batches("multiclass", "logits", seed=2)
    for name in (*STAT_METRICS, "AUROC", "AveragePrecision"):
        assert_same(data, name, task="multiclass", num_classes=NUM_CLASSES)


@pytest.mark.parametrize("threshold", [0.3, 0.7])
@pytest.mark.parametrize("task", ["binary", "multilabel"])
def test_threshold(task, threshold):
    data = batches(task, "probs", seed=9)
    for name in STAT_METRICS:
        assert_same(data, name, task=task, threshold=threshold, average="macro", **task_options(task))


def test_f_beta():
    data = batches("multiclass", "logits", seed=4)
    for average in AVERAGES:
        assert_same(data, "FBetaScore", task="multiclass", num_classes=NUM_CLASSES, beta=2.0, average=average)


@pytest.mark.parametrize("normalize", [None, "none", "true", "pred", "all"])
@pytest.mark.parametrize("kind", ["probs", "logits", "labels"])
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_confusion_matrix(task, kind, normalize):
    data = batches(task, kind, seed=6, ignore_index=-1)
    assert_same(data, "ConfusionMatrix", task=task, normalize=normalize, ignore_index=-1, **task_options(task))


def test_confusion_matrix_of_an_absent_class_normalizes_to_zero():
    data = batches("multiclass", "logits", seed=7, absent_class=True)
    for normalize in ("true", "pred"):
        confmat = assert_same(data, "ConfusionMatrix", task="multiclass", num_classes=NUM_CLASSES, normalize=normalize)
        assert confmat.numpy()[-1].sum() == 0


def curve_averages(task):
    return {"binary": ["macro"], "multiclass": ["macro", "weighted", "none"],
            "multilabel": ["micro", "macro", "weighted", "none"]}[task]


@pytest.mark.parametrize("ignore_index", [None, -1])
@pytest.mark.parametrize("kind", ["probs", "logits"])
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("name", ["AUROC", "AveragePrecision"])
def test_curve_metrics_match_torchmetrics(name, task, kind, ignore_index):
    data = batches(task, kind, seed=8, ignore_index=ignore_index)
    for average in curve_averages(task):
        assert_same(data, name, task=task, average=average, ignore_index=ignore_index, **task_options(task))


@pytest.mark.parametrize("task", ["multiclass", "multilabel"])
@pytest.mark.parametrize("name", ["AUROC", "AveragePrecision"])
def test_curve_metrics_with_a_class_that_never_appears(name, task):
    if task == "multiclass":
        data = batches(task, "probs", seed=12, absent_class=True)
    else:  # label 0 never positive
        data = [(preds, np.concatenate([np.zeros_like(target[:, :1]), target[:, 1:]], axis=1))
                for preds, target in batches(task, "probs", seed=12)]
    for average in curve_averages(task):
        assert_same(data, name, task=task, average=average, **task_options(task))


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("name", ["AUROC", "AveragePrecision"])
def test_all_equal_scores(name, task):
    data = [(np.full_like(preds, 0.5), target) for preds, target in batches(task, "probs", seed=13)]
    for average in curve_averages(task):
        assert_same(data, name, task=task, average=average, **task_options(task))


@pytest.mark.parametrize("name", ["AUROC", "AveragePrecision"])
def test_binary_curves_with_ties_and_one_class_only(name):
    rng = np.random.default_rng(14)
    tied = [(rng.integers(0, 4, 20).astype(np.float32) / 4, rng.integers(0, 2, 20)) for _ in range(2)]
    assert_same(tied, name, task="binary")
    negatives = [(rng.random(10).astype(np.float32), np.zeros(10, dtype=np.int64))]
    with pytest.warns(UserWarning):  # (torchmetrics warns; ember returns the same number quietly)
        assert_same(negatives, name, task="binary")


def test_float64_inputs():
    data = [(preds.astype(np.float64), target) for preds, target in batches("multiclass", "logits", seed=15)]
    for name in (*STAT_METRICS, "AUROC", "AveragePrecision"):
        assert_same(data, name, task="multiclass", num_classes=NUM_CLASSES, average="macro")


def test_results_are_float32_tensors_as_torchmetrics():
    ours, theirs = both("Accuracy", batches("binary", "probs", seed=1), task="binary")
    assert ours.dtype == ember.float32 and theirs.dtype == torch.float32 and ours.ndim == 0


@pytest.mark.parametrize("options, match", [
    ({"task": "multi"}, "Invalid Classification"),
    ({"task": "multiclass"}, "num_classes"),
    ({"task": "multilabel"}, "num_labels"),
    ({"task": "multiclass", "num_classes": 3, "average": "samples"}, "average"),
    ({"task": "multiclass", "num_classes": 3, "top_k": 4}, "top_k"),
])
def test_bad_arguments_raise_as_torchmetrics(options, match):
    with pytest.raises(ValueError, match=match):
        torchmetrics.Accuracy(**options)
    with pytest.raises(ValueError, match=match):
        ember_metrics.Accuracy(**options)


@pytest.mark.parametrize("preds, target, match", [
    ([0.2, 1.0], [0, 5], "Detected the following values in `target`"),
    ([0.2, 1.0, 0.3], [0, 1], "Predictions and targets are expected to have the same shape"),
])
def test_bad_inputs_raise_as_torchmetrics(preds, target, match):
    with pytest.raises(RuntimeError, match=match):
        torchmetrics.Accuracy(task="binary").update(torch.tensor(preds), torch.tensor(target))
    with pytest.raises(RuntimeError, match=match):
        ember_metrics.Accuracy(task="binary").update(ember.tensor(preds), ember.tensor(target))


def test_multiclass_targets_outside_the_classes_raise():
    # (torchmetrics only counts the distinct values here, and lets [0, 5] through with 3 classes)
    with pytest.raises(RuntimeError, match=r"Detected the following values in `target`: \[0, 5\]"):
        ember_metrics.Accuracy(task="multiclass", num_classes=3).update(ember.tensor([0, 1]), ember.tensor([0, 5]))
