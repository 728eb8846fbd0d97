"""Log the learning rate of every step.

PyTorch counterpart: none in torch (``scheduler.get_last_lr()`` is what there is);
Lightning's lightning/pytorch/callbacks/lr_monitor.py (``LearningRateMonitor(
logging_interval="step")``, one curve per parameter group). ember's names the curves
``lr`` (the first group) and ``lr/group1``, ... for the others, at the global step; the
epoch's record already keeps the rate the epoch ended at (``lr``).
"""

from ember.trainer.callbacks.callback import Callback


class LearningRateMonitor(Callback):
    """Hand each step's learning rate(s) to the run's loggers (TensorBoard, CSV)."""

    def on_batch_end(self, trainer, loss, step):
        rates = {}
        for index, group in enumerate(trainer.optimizer.param_groups):
            rates["lr" if index == 0 else f"lr/group{index}"] = float(group["lr"])
        trainer.log_metrics(rates, step)
