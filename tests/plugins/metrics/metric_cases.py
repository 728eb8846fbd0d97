"""Inputs of the metrics tests, shared by the single-process tests and the ranks of the
multi-rank job (sync_checks.py): batches of predictions (probabilities, logits or labels)
and targets for each classification task, as NumPy arrays from a seeded generator; and
``Summary``, a metric with a state of each reduction."""

import numpy as np

import ember
import ember_metrics

NUM_CLASSES = 4


def softmax(x, axis=1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def batch(task, kind, size, rng, ignore_index=None, absent_class=False, extra_dims=()):
    """One batch ``(preds, target)``: ``kind`` is "probs", "logits" or "labels"."""
    classes = NUM_CLASSES - 1 if absent_class else NUM_CLASSES  # the last class never appears
    if task == "binary":
        shape = (size, *extra_dims)
        target = rng.integers(0, 2, shape)
        logits = rng.normal(0, 2, shape) + (target - 0.5) * 1.5
        preds = {"probs": 1 / (1 + np.exp(-logits)), "logits": logits, "labels": (logits > 0).astype(np.int64)}[kind]
    elif task == "multiclass":
        shape = (size, *extra_dims)
        target = rng.integers(0, classes, shape)
        logits = rng.normal(0, 1.5, (size, NUM_CLASSES, *extra_dims))
        logits += 1.5 * np.moveaxis(np.eye(NUM_CLASSES)[target], -1, 1)  # better than chance
        if absent_class:
            logits[:, -1] = -10.0
        preds = {"probs": softmax(logits), "logits": logits, "labels": logits.argmax(1)}[kind]
    else:
        shape = (size, NUM_CLASSES, *extra_dims)
        target = rng.integers(0, 2, shape)
        logits = rng.normal(0, 2, shape) + (target - 0.5) * 1.5
        preds = {"probs": 1 / (1 + np.exp(-logits)), "logits": logits, "labels": (logits > 0).astype(np.int64)}[kind]
    if ignore_index is not None:
        target = np.where(rng.random(target.shape) < 0.15, ignore_index, target)
    if kind != "labels":
        preds = preds.astype(np.float32)
    return preds, target.astype(np.int64)


def batches(task, kind, seed, sizes=(7, 12, 5), **options):
    rng = np.random.default_rng(seed)
    return [batch(task, kind, size, rng, **options) for size in sizes]


class Summary(ember_metrics.Metric):
    """A state of each reduction (sum, mean, min, max, cat, a callable); ``compute``
    returns them all."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name, value, reduction in (("total", 0.0, "sum"), ("average", 0.0, "mean"),
                                       ("low", np.inf, "min"), ("high", -np.inf, "max")):
            self.add_state(name, ember.tensor(value, dtype=ember.float64), dist_reduce_fx=reduction)
        self.add_state("seen", [], dist_reduce_fx="cat")
        self.add_state("doubled", ember.zeros(2, dtype=ember.float64), dist_reduce_fx=lambda stack: stack.sum(0) * 2)

    def update(self, values):
        self.total = self.total + values.sum()
        self.average = values.mean()
        self.low = ember.minimum(self.low, values.min())
        self.high = ember.maximum(self.high, values.max())
        self.seen.append(values)
        self.doubled = self.doubled + values[:2]

    def compute(self):
        return {name: getattr(self, name) for name in self._defaults}
