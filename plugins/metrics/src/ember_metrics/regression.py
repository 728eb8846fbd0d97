"""Regression metrics: ``MeanSquaredError`` (and its root) and ``MeanAbsoluteError``.

PyTorch counterpart: none in torch; torchmetrics/regression/mse.py and mae.py (torchmetrics 1.9): a sum
of errors and a count, both "sum" states, so the ranks add theirs.

>>> import ember
>>> metric = MeanSquaredError()
>>> metric.update(ember.tensor([2.5, 0.0, 2.0, 8.0]), ember.tensor([3.0, -0.5, 2.0, 7.0]))
>>> float(metric.compute())
0.375
"""

import ember
from ember_metrics.metric import Metric


class _MeanError(Metric):
    """The mean of ``error(preds - target)`` over every element (per output with ``num_outputs`` > 1)."""

    is_differentiable = True
    higher_is_better = False

    def __init__(self, num_outputs=1, **kwargs):
        super().__init__(**kwargs)
        if not (isinstance(num_outputs, int) and num_outputs > 0):
            raise ValueError(f"Expected num_outputs to be a positive integer but got {num_outputs}")
        self.num_outputs = num_outputs
        self.add_state("sum_error", ember.zeros(num_outputs), dist_reduce_fx="sum")
        self.add_state("total", ember.tensor(0), dist_reduce_fx="sum")

    def error(self, difference):
        raise NotImplementedError

    def update(self, preds, target):
        """Add one batch's errors and count."""
        if preds.shape != target.shape:
            raise RuntimeError(f"Predictions and targets are expected to have the same shape, but got "
                               f"{tuple(preds.shape)} and {tuple(target.shape)}.")
        difference = preds.float() - target.float() if not preds.is_floating_point() else preds - target
        if self.num_outputs == 1:
            difference = difference.reshape(-1)
        self.sum_error = self.sum_error + self.error(difference).sum(0)
        self.total = self.total + difference.shape[0]

    def compute(self):
        value = self.sum_error / self.total
        return value.squeeze() if self.num_outputs == 1 else value


class MeanSquaredError(_MeanError):
    """Mean squared error; with ``squared=False`` its root (RMSE)."""

    def __init__(self, squared=True, num_outputs=1, **kwargs):
        super().__init__(num_outputs, **kwargs)
        self.squared = squared

    def error(self, difference):
        return difference * difference

    def compute(self):
        value = super().compute()
        return value if self.squared else value.sqrt()


class MeanAbsoluteError(_MeanError):
    """Mean absolute error."""

    def error(self, difference):
        return difference.abs()
