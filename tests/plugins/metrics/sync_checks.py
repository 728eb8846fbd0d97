"""Run by every rank of an mpiexec job (tests/plugins/metrics/test_sync.py): each rank
updates the metrics with its own share of the batches (shares of different sizes, and one
rank holding nothing for some metrics), computes (which syncs the states over the ranks),
and checks the value against torchmetrics (or NumPy) on all the ranks' data concatenated.
Writes ``rank-<N>.json`` into the folder given as argv[1]."""

import sys

import numpy as np
import torch
import torchmetrics
from metric_cases import NUM_CLASSES, Summary, batches
from rank_checks import RankChecks  # tests/plugins/mpi, on the job's PYTHONPATH

import ember
import ember.distributed as dist
import ember_metrics

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
checks = RankChecks()
OPTIONS = {"binary": {}, "multiclass": {"num_classes": NUM_CLASSES}, "multilabel": {"num_labels": NUM_CLASSES}}


def share(data, rank):
    """Rank 0 takes the first two batches, rank 1 the rest, ..., the last ranks none."""
    bounds = [0, 2, *range(3, len(data) + 1)] + [len(data)] * SIZE
    return data[bounds[rank]:bounds[rank + 1]]


def synced_against_torchmetrics(name, task, kind, everything=None, **options):
    data = batches(task, kind, seed=21, sizes=(9, 4, 11), ignore_index=-1) if everything is None else everything
    ours = getattr(ember_metrics, name)(task=task, ignore_index=-1, **OPTIONS[task], **options)
    theirs = getattr(torchmetrics, name)(task=task, ignore_index=-1, **OPTIONS[task], **options)
    for preds, target in share(data, RANK):
        ours.update(ember.from_numpy(preds), ember.from_numpy(target))
    for preds, target in data:
        theirs.update(torch.from_numpy(preds), torch.from_numpy(target))
    local = {state: np.copy(value.numpy()) for state, value in ours.metric_state.items() if not isinstance(value, list)}
    got, expected = ours.compute().numpy(), theirs.compute().numpy()
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True):
        return f"{got} != {expected}"
    # compute unsynced afterwards: the rank's own states are back
    if any(not np.array_equal(ours.metric_state[state].numpy(), value) for state, value in local.items()):
        return "the local states were not restored after compute"
    return True


for task in ("binary", "multiclass", "multilabel"):
    for name in ("Accuracy", "Precision", "Recall", "F1Score"):
        for average in ("micro", "macro", "weighted", "none"):
            checks.run(f"{name} {task} {average}")(
                lambda name=name, task=task, average=average:
                synced_against_torchmetrics(name, task, "logits", average=average))
    checks.run(f"ConfusionMatrix {task}")(
        lambda task=task: synced_against_torchmetrics("ConfusionMatrix", task, "probs", normalize="true"))
    for name in ("AUROC", "AveragePrecision"):
        averages = {"binary": ["macro"], "multiclass": ["macro", "weighted", "none"],
                    "multilabel": ["micro", "macro", "weighted"]}[task]
        for average in averages:
            checks.run(f"{name} {task} {average}")(
                lambda name=name, task=task, average=average:
                synced_against_torchmetrics(name, task, "probs", average=average))


@checks.run("AUROC: a rank that holds no scores at all")
def _():
    data = batches("multiclass", "logits", seed=22, sizes=(6, 5))  # rank 0 takes both, rank 1 none
    return synced_against_torchmetrics("AUROC", "multiclass", "logits", everything=data)


@checks.run("MeanSquaredError and MeanAbsoluteError")
def _():
    rng = np.random.default_rng(23)
    data = [(rng.normal(size=n), rng.normal(size=n)) for n in (5, 8, 3)]
    for name in ("MeanSquaredError", "MeanAbsoluteError"):
        ours, theirs = getattr(ember_metrics, name)(), getattr(torchmetrics, name)()
        for preds, target in share(data, RANK):
            ours.update(ember.from_numpy(preds), ember.from_numpy(target))
        for preds, target in data:
            theirs.update(torch.from_numpy(preds), torch.from_numpy(target))
        if not np.isclose(float(ours.compute()), float(theirs.compute()), rtol=1e-6):
            return f"{name}: {float(ours.compute())} != {float(theirs.compute())}"
    return True


class StackedSummary(Summary):
    """Summary with a state that has no reduction: the ranks' values stacked."""

    def __init__(self):
        super().__init__()
        self.add_state("stacked", ember.zeros(2, dtype=ember.float64), dist_reduce_fx=None)

    def update(self, values):
        super().update(values)
        self.stacked = values[:2]


@checks.run("every reduction: sum, mean, min, max, cat, a callable, None")
def _():
    ranks = [np.random.default_rng(30 + r).normal(size=3 + r) for r in range(SIZE)]
    metric = StackedSummary()
    metric.update(ember.from_numpy(ranks[RANK]))
    got = {name: (ember.cat(value) if isinstance(value, list) else value).numpy()
           for name, value in metric.compute().items()}
    expected = {"total": sum(v.sum() for v in ranks), "average": np.mean([v.mean() for v in ranks]),
                "low": min(v.min() for v in ranks), "high": max(v.max() for v in ranks),
                "seen": np.concatenate(ranks), "doubled": 2 * sum(v[:2] for v in ranks),
                "stacked": np.stack([v[:2] for v in ranks])}
    wrong = [name for name in expected if not np.allclose(got[name], expected[name], rtol=1e-12)]
    return not wrong or f"{wrong}: {got} != {expected}"


@checks.run("sync / unsync / sync_context by hand; a second sync is an error")
def _():
    metric = ember_metrics.Accuracy(task="binary")
    metric.update(ember.tensor([0.9, 0.1] if RANK == 0 else [0.9]), ember.tensor([1, 1] if RANK == 0 else [1]))
    local_tp = int(metric.tp)
    metric.sync()
    if int(metric.tp) != 1 + (SIZE - 1):
        return f"synced tp {int(metric.tp)}"
    try:
        metric.sync()
        return "a second sync passed"
    except ember_metrics.metric.MetricsError:
        pass
    metric.unsync()
    with metric.sync_context():
        synced = int(metric.tn + metric.fn)
    return (int(metric.tp) == local_tp and synced == 1) or f"tp {int(metric.tp)}, fn {synced}"


@checks.run("forward with dist_sync_on_step: the batch value of every rank's batch")
def _():
    data = batches("multiclass", "logits", seed=24, sizes=(5, 7))
    ours = ember_metrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES, dist_sync_on_step=True)
    preds, target = data[min(RANK, 1)]
    value = float(ours(ember.from_numpy(preds), ember.from_numpy(target)))
    both = [data[min(r, 1)] for r in range(SIZE)]
    theirs = torchmetrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES)
    expected = float(theirs(torch.from_numpy(np.concatenate([p for p, _ in both])),
                            torch.from_numpy(np.concatenate([t for _, t in both]))))
    return bool(np.isclose(value, expected)) or f"{value} != {expected}"


@checks.run("MetricCollection computes every metric synced")
def _():
    data = batches("multiclass", "probs", seed=25, sizes=(8, 6, 9))
    collection = ember_metrics.MetricCollection(
        {"acc": ember_metrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES),
         "f1": ember_metrics.F1Score(task="multiclass", num_classes=NUM_CLASSES, average="macro"),
         "ap": ember_metrics.AveragePrecision(task="multiclass", num_classes=NUM_CLASSES)}, prefix="val/")
    for preds, target in share(data, RANK):
        collection.update(ember.from_numpy(preds), ember.from_numpy(target))
    preds = torch.from_numpy(np.concatenate([p for p, _ in data]))
    target = torch.from_numpy(np.concatenate([t for _, t in data]))
    task = {"task": "multiclass", "num_classes": NUM_CLASSES}
    expected = {"val/acc": torchmetrics.Accuracy(**task)(preds, target),
                "val/f1": torchmetrics.F1Score(**task, average="macro")(preds, target),
                "val/ap": torchmetrics.AveragePrecision(**task)(preds, target)}
    got = collection.compute()
    wrong = [key for key in expected if not np.isclose(float(got[key]), float(expected[key]), atol=1e-6)]
    return not wrong or f"{wrong}: {got} != {expected}"


@checks.run("MeanAveragePrecision: each rank's images, synced, equal one process's")
def _():
    rng = np.random.default_rng(26)
    images = []
    for _ in range(7):
        corners = rng.uniform(0, 40, size=(3, 2))
        boxes = np.concatenate([corners, corners + rng.uniform(5, 20, size=(3, 2))], axis=1)
        labels = rng.integers(0, 2, 3)
        noisy = boxes + rng.normal(0, 1.5, size=boxes.shape)
        detection = {"boxes": noisy, "scores": rng.random(3), "labels": labels}
        images.append((detection, {"boxes": boxes, "labels": labels}))
    tensors = [({k: ember.from_numpy(np.asarray(v)) for k, v in d.items()},
                {k: ember.from_numpy(np.asarray(v)) for k, v in t.items()}) for d, t in images]
    mine = tensors[:4] if RANK == 0 else tensors[4:] if RANK == 1 else []
    synced, alone = ember_metrics.MeanAveragePrecision(), ember_metrics.MeanAveragePrecision()
    synced.update([d for d, _ in mine], [t for _, t in mine])
    alone.update([d for d, _ in tensors], [t for _, t in tensors])
    with alone.sync_context(should_sync=False):
        expected = alone.compute()
    got = synced.compute()
    wrong = [key for key in expected if not np.allclose(got[key].numpy(), expected[key].numpy())]
    return not wrong or f"{wrong}"


dist.barrier()
checks.write(sys.argv[1], RANK, size=SIZE)
dist.destroy_process_group()
