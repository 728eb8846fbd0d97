"""Stop a run when a validation metric stops improving.

PyTorch counterpart: none in torch; Lightning's lightning/pytorch/callbacks/early_stopping.py
(``EarlyStopping(monitor, min_delta, patience, mode)``) and
Keras' keras/src/callbacks/early_stopping.py. ember's says why it stopped, in the log and
in metrics.json: "early stopping: val/accuracy did not improve for 3 epochs (best 0.9100 at
epoch 4)". Its count and best value are saved in the checkpoint, as Lightning's are, so
a resumed run stops where an uninterrupted one would (NOTE [ A callback's state in the
checkpoint ] in callback.py); one added only at the resume replays the run's earlier
epochs instead.
"""

from ember.trainer.callbacks.callback import Callback, state_key_of
from ember.trainer.callbacks.monitor import available, check_mode, improves, monitored_value
from ember.zoo.errors import ZooError


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    epochs in a row. ``mode`` ("min" or "max") defaults to "min" for a loss, "max" otherwise."""

    def __init__(self, monitor="val/loss", patience=3, mode=None, min_delta=0.0):
        if patience < 1:
            raise ZooError(f"patience must be at least 1 epoch, got {patience}")
        if min_delta < 0:
            raise ZooError(f"min_delta must not be negative, got {min_delta}")
        self.monitor, self.patience, self.min_delta = monitor, patience, min_delta
        self.mode = check_mode(mode, monitor)
        self.best, self.best_epoch, self.wait = None, None, 0

    @property
    def state_key(self):
        return state_key_of(self, monitor=self.monitor, mode=self.mode)

    def state_dict(self):
        return {"wait": self.wait, "best": self.best, "best_epoch": self.best_epoch,
                "patience": self.patience}

    def load_state_dict(self, state):
        self.wait, self.best = state["wait"], state["best"]
        self.best_epoch = state["best_epoch"]

    def on_train_start(self, trainer):
        self.best, self.best_epoch, self.wait = None, None, 0
        for record in trainer.history:  # a resumed run's earlier epochs
            self._judge(trainer, record)

    def on_epoch_end(self, trainer, record):
        self._judge(trainer, record)

    def _judge(self, trainer, record):
        value = monitored_value(record, self.monitor)
        if value is None:
            raise ZooError(f"early stopping monitors {self.monitor!r}, which the run "
                           f"does not report; it has {', '.join(available(record))}")
        if improves(value, self.best, self.mode, self.min_delta):
            self.best, self.best_epoch, self.wait = value, record["epoch"], 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            epochs = f"{self.wait} epoch{'s' if self.wait > 1 else ''}"
            trainer.stop(f"early stopping: {self.monitor} did not improve for {epochs} "
                         f"(best {self.best:.4f} at epoch {self.best_epoch})")
