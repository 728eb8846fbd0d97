"""The run's checkpoints: the last epoch's, the best epoch's, and one every N epochs.

PyTorch counterpart: none in torch (``torch.save`` is all it has); Lightning's
lightning/pytorch/callbacks/model_checkpoint.py (``ModelCheckpoint(monitor, mode,
every_n_epochs, save_last, save_top_k=-1)``, always present unless the user gives one) and
Keras' keras/src/callbacks/model_checkpoint.py. ember writes ``checkpoint.pt`` (last),
``best.pt`` (best so far by ``monitor``) and, with ``every_n_epochs``,
``epoch-0004.pt``-style files that stay (NOTE [ Checkpoints and interruption ] in
ember/trainer/training.py). Every write is atomic (``ember.save``).
"""

import contextlib
import os

from ember.trainer.callbacks.callback import Callback, state_key_of
from ember.trainer.callbacks.monitor import check_mode, improves, monitored_value
from ember.zoo.errors import ZooError

LAST = "checkpoint.pt"
BEST = "best.pt"


class ModelCheckpoint(Callback):
    """Save the last epoch's checkpoint, the best one by ``monitor`` (the task's metric by
    default, higher is better) and, every ``every_n_epochs`` epochs, ``epoch-NNNN.pt``."""

    order = 2  # last: the epoch's record is complete (NOTE [ The hooks of a run ])

    def __init__(self, every_n_epochs=None, monitor=None, mode=None):
        if every_n_epochs is not None and every_n_epochs < 1:
            raise ZooError(f"a checkpoint every {every_n_epochs} epochs: the interval must be at least 1")
        self.every_n_epochs, self.monitor, self.mode = every_n_epochs, monitor, mode
        self._given = (monitor, mode)  # as constructed: the state's key (on_train_start fills the defaults in)
        self.best = None

    @property
    def state_key(self):
        return state_key_of(self, monitor=self._given[0], mode=self._given[1], every_n_epochs=self.every_n_epochs)

    def state_dict(self):
        """The best value so far and what it is of (NOTE [ A callback's state in the checkpoint ])."""
        return {"monitor": self.monitor, "mode": self.mode, "best": self.best}

    def load_state_dict(self, state):
        if (state["monitor"], state["mode"]) == (self.monitor, self.mode):
            self.best = state["best"]

    def on_train_start(self, trainer):
        self.monitor = self.monitor or f"val/{trainer.metric}"
        self.mode = check_mode(self.mode, self.monitor)
        self.best = None
        for record in trainer.history:  # a resumed run's earlier epochs
            self._is_best(record)

    def on_epoch_end(self, trainer, record):
        best = self._is_best(record)
        if not trainer.is_main:
            return
        checkpoint = trainer.checkpoint()
        save(checkpoint, trainer.out, LAST)
        if best:
            save(checkpoint, trainer.out, BEST)
        if self.every_n_epochs and record["epoch"] % self.every_n_epochs == 0:
            save(checkpoint, trainer.out, periodic_name(record["epoch"]))

    def _is_best(self, record):
        value = monitored_value(record, self.monitor)
        if improves(value, self.best, self.mode):
            self.best = value
            return True
        return False


def periodic_name(epoch):
    """The file of the checkpoint kept at ``epoch``: ``epoch-0004.pt`` (sorted as numbered)."""
    return f"epoch-{epoch:04d}.pt"


def save(checkpoint, out, name):
    import ember

    with naming(out):
        out.mkdir(parents=True, exist_ok=True)
    with naming(out / name):
        ember.save(checkpoint, out / name)


@contextlib.contextmanager
def naming(path):
    """An OSError without a file name (a full disk, raised by a write) gets ``path``, so
    ``ember train`` says which file could not be written (the previous one is intact:
    NOTE [ Checkpoints and interruption ])."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or not exc.errno:
            raise
        raise type(exc)(exc.errno, exc.strerror or os.strerror(exc.errno), str(path)) from exc
