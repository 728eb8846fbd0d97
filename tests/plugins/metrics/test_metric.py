"""The ``Metric`` protocol against torchmetrics': add_state, forward (the batch value, and
the accumulated one after it), reset, the cached compute, state_dict, to(), the
reductions folding a batch into the states, and MetricCollection."""

import copy

import numpy as np
import pytest
import torch
import torchmetrics
from metric_cases import NUM_CLASSES, Summary, batches

import ember
import ember_metrics
from ember_metrics import MetricCollection


def as_ember(array):
    return ember.from_numpy(np.asarray(array))


@pytest.mark.parametrize("name, options", [
    ("Accuracy", {"task": "multiclass", "num_classes": NUM_CLASSES}),
    ("F1Score", {"task": "multiclass", "num_classes": NUM_CLASSES, "average": "macro"}),
    ("AUROC", {"task": "multiclass", "num_classes": NUM_CLASSES}),
    ("ConfusionMatrix", {"task": "multiclass", "num_classes": NUM_CLASSES}),
])
def test_forward_gives_the_batch_value_and_accumulates(name, options):
    ours, theirs = getattr(ember_metrics, name)(**options), getattr(torchmetrics, name)(**options)
    for preds, target in batches("multiclass", "logits", seed=1):
        batch_ours = ours(as_ember(preds), as_ember(target))
        batch_theirs = theirs(torch.from_numpy(preds), torch.from_numpy(target))
        np.testing.assert_allclose(batch_ours.numpy(), batch_theirs.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.compute().numpy(), theirs.compute().numpy(), rtol=1e-5, atol=1e-6)
    assert ours.update_count == 3


@pytest.mark.parametrize("cls", [ember_metrics.MeanSquaredError, ember_metrics.MeanAbsoluteError])
def test_regression_against_torchmetrics(cls):
    rng = np.random.default_rng(0)
    for options in ({}, {"squared": False}, {"num_outputs": 2}):
        if "squared" in options and cls is ember_metrics.MeanAbsoluteError:
            continue
        ours, theirs = cls(**options), getattr(torchmetrics, cls.__name__)(**options)
        shape = (6, 2) if options.get("num_outputs") else (6,)
        for dtype in (np.float32, np.float64):
            preds, target = rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
            batch = ours(as_ember(preds), as_ember(target))
            np.testing.assert_allclose(batch.numpy(), theirs(torch.from_numpy(preds), torch.from_numpy(target)).numpy(),
                                       rtol=1e-6)
        np.testing.assert_allclose(ours.compute().numpy(), theirs.compute().numpy(), rtol=1e-6)


def test_regression_takes_integer_targets():
    ours, theirs = ember_metrics.MeanSquaredError(), torchmetrics.MeanSquaredError()
    ours.update(ember.tensor([1.5, 2.0]), ember.tensor([1, 3]))
    theirs.update(torch.tensor([1.5, 2.0]), torch.tensor([1, 3]))
    assert float(ours.compute()) == pytest.approx(float(theirs.compute()))


class TorchSummary(torchmetrics.Metric):
    """metric_cases.Summary written for torchmetrics."""

    full_state_update = False

    def __init__(self):
        super().__init__()
        for name, value, reduction in (("total", 0.0, "sum"), ("average", 0.0, "mean"),
                                       ("low", float("inf"), "min"), ("high", -float("inf"), "max")):
            self.add_state(name, torch.tensor(value, dtype=torch.float64), dist_reduce_fx=reduction)
        self.add_state("seen", [], dist_reduce_fx="cat")
        self.add_state("doubled", torch.zeros(2, dtype=torch.float64), dist_reduce_fx=lambda stack: stack.sum(0) * 2)

    def update(self, values):
        self.total = self.total + values.sum()
        self.average = values.mean()
        self.low = torch.minimum(self.low, values.min())
        self.high = torch.maximum(self.high, values.max())
        self.seen.append(values)
        self.doubled = self.doubled + values[:2]

    def compute(self):
        return self.total


def test_forward_folds_each_reduction_as_torchmetrics():
    ours, theirs = Summary(), TorchSummary()
    rng = np.random.default_rng(2)
    for size in (3, 5, 4):
        values = rng.normal(size=size)
        assert float(ours(as_ember(values))["total"]) == pytest.approx(float(theirs(torch.from_numpy(values))))
    for name in ("total", "average", "low", "high", "doubled"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ember.cat(ours.seen).numpy(), torch.cat(theirs.seen).numpy())


def test_add_state_refuses_what_torchmetrics_refuses():
    metric = Summary()
    with pytest.raises(ValueError, match="state variable must be a tensor or any empty list"):
        metric.add_state("bad", [ember.tensor(1.0)])
    with pytest.raises(ValueError, match="`dist_reduce_fx` must be callable or one of"):
        metric.add_state("bad", ember.tensor(1.0), dist_reduce_fx="median")


def test_reset_restores_the_defaults_and_compute_is_cached():
    metric = Summary()
    metric.update(ember.tensor([1.0, 2.0], dtype=ember.float64))
    first = metric.compute()
    assert metric.compute() is first  # cached until the next update
    metric.update(ember.tensor([3.0, 4.0], dtype=ember.float64))
    assert float(metric.compute()["total"]) == 10.0
    metric.reset()
    assert metric.update_count == 0 and metric.seen == [] and float(metric.total) == 0.0
    with pytest.warns(UserWarning, match="was called before the ``update``"):
        metric.compute()


def test_state_dict_holds_persistent_states_and_loads_them():
    metric = ember_metrics.Accuracy(task="multiclass", num_classes=3)
    metric.update(ember.tensor([0, 1, 2, 1]), ember.tensor([0, 1, 1, 1]))
    assert list(metric.state_dict()) == []  # states are not persistent by default, as in torchmetrics
    metric.persistent(True)
    state = metric.state_dict()
    assert sorted(state) == ["fn", "fp", "tn", "tp"]
    fresh = ember_metrics.Accuracy(task="multiclass", num_classes=3)
    fresh.load_state_dict(state)
    with pytest.warns(UserWarning, match="before the ``update``"):  # (a loaded metric has no updates: torchmetrics too)
        assert float(fresh.compute()) == float(metric.compute()) == 0.75
    theirs = torchmetrics.Accuracy(task="multiclass", num_classes=3)
    theirs.persistent(True)
    assert sorted(theirs.state_dict()) == sorted(state)


def test_to_moves_and_casts_the_states():
    metric = ember_metrics.MeanSquaredError()
    metric.update(ember.tensor([1.0, 2.0]), ember.tensor([1.5, 2.5]))
    metric.double()
    assert metric.sum_error.dtype == ember.float64 and metric._defaults["sum_error"].dtype == ember.float64
    assert metric.total.dtype == ember.int64  # integer states keep their dtype
    metric.to("cpu")
    assert float(metric.compute()) == 0.25


def test_clone_and_deepcopy_are_independent():
    metric = ember_metrics.Accuracy(task="binary")
    metric.update(ember.tensor([0.9, 0.1]), ember.tensor([1, 1]))
    twin = copy.deepcopy(metric)
    twin.update(ember.tensor([0.9]), ember.tensor([1]))
    assert float(metric.compute()) == 0.5 and float(twin.compute()) == pytest.approx(2 / 3)
    assert metric.clone().update_count == 1


def test_a_subclass_calling_super_update_counts_once():
    class Twice(ember_metrics.MeanAbsoluteError):
        def update(self, preds, target):
            super().update(preds, target)

    metric = Twice()
    metric.update(ember.tensor([1.0]), ember.tensor([0.0]))
    assert metric.update_count == 1 and float(metric.compute()) == 1.0


def collections(**options):
    kinds = {"acc": ("Accuracy", {"average": "micro"}), "prec": ("Precision", {"average": "macro"}),
             "f1": ("F1Score", {"average": "macro"}), "auroc": ("AUROC", {})}
    made = []
    for module in (ember_metrics, torchmetrics):
        metrics = {key: getattr(module, name)(task="multiclass", num_classes=NUM_CLASSES, **extra)
                   for key, (name, extra) in kinds.items()}
        made.append(module.MetricCollection(metrics, **options))
    return made


@pytest.mark.parametrize("compute_groups", [True, False, [["prec", "f1"], ["acc"], ["auroc"]]])
def test_metric_collection_against_torchmetrics(compute_groups):
    ours, theirs = collections(prefix="val_", postfix="_x", compute_groups=compute_groups)
    for preds, target in batches("multiclass", "probs", seed=3):
        batch_ours = ours(as_ember(preds), as_ember(target))
        batch_theirs = theirs(torch.from_numpy(preds), torch.from_numpy(target))
        assert sorted(batch_ours) == sorted(batch_theirs)
    for preds, target in batches("multiclass", "probs", seed=4):
        ours.update(as_ember(preds), as_ember(target))
        theirs.update(torch.from_numpy(preds), torch.from_numpy(target))
    result_ours, result_theirs = ours.compute(), theirs.compute()
    assert sorted(result_ours) == sorted(result_theirs) == ["val_acc_x", "val_auroc_x", "val_f1_x", "val_prec_x"]
    for key, value in result_theirs.items():
        assert float(result_ours[key]) == pytest.approx(float(value), abs=1e-6), key
    if compute_groups is True:  # Precision and F1 share tp/fp/tn/fn: one group, as torchmetrics finds; ember's
        # micro Accuracy keeps per-class counts too (NOTE [ Averaging a per-class score ]), so it joins them
        assert sorted(map(sorted, ours.compute_groups.values())) == [["acc", "f1", "prec"], ["auroc"]]
        assert ["f1", "prec"] in map(sorted, theirs.compute_groups.values())
    ours.reset()
    assert all(metric.update_count == 0 for metric in ours.values())


def test_metric_collection_of_a_list_keys_by_class_name_and_clones():
    collection = MetricCollection([ember_metrics.Accuracy(task="binary"), ember_metrics.Recall(task="binary")])
    assert collection.keys() == ["Accuracy", "Recall"]
    collection.update(ember.tensor([0.9, 0.2, 0.8]), ember.tensor([1, 1, 0]))
    copied = collection.clone(prefix="train/")
    assert sorted(copied.compute()) == ["train/Accuracy", "train/Recall"]
    assert float(copied.compute()["train/Recall"]) == 0.5
    with pytest.raises(ValueError, match="two metrics both named Accuracy"):
        MetricCollection([ember_metrics.Accuracy(task="binary"), ember_metrics.Accuracy(task="binary")])


def test_ember_metrics_names_are_in_the_catalogue():
    import ember.metrics

    assert ember.metrics.F1Score is ember_metrics.F1Score
    assert set(ember.metrics.FIRST_PARTY) <= set(dir(ember.metrics))
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        ember.metrics.Nope
