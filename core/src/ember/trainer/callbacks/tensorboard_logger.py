"""The run's curves as TensorBoard event files in ``OUT/tensorboard`` (``--log tensorboard``).

PyTorch counterpart: torch/utils/tensorboard/writer.py's ``SummaryWriter`` does the
writing (ember.utils.tensorboard); the callback is Lightning's
lightning/pytorch/loggers/tensorboard.py (``TensorBoardLogger``) and Keras'
keras/src/callbacks/tensorboard.py. Each epoch's ``train/loss`` and ``val/<metric>`` are
scalars at the epoch's number, as ``ember train --log tensorboard`` always wrote them, and
so are the record's other numbers, as ``epoch/lr``, ``epoch/seconds``, ...; what callbacks
log per step (``lr``, ``grad_norm``) is at the global step (a curve has one x axis, so an
epoch's ``lr`` and a step's are two curves). A resumed run continues the same curves
(its steps go on from the checkpoint's) in the same folder. Rank 0 alone writes.
"""

from ember.trainer.callbacks.logger import Logger, epoch_scalars

FOLDER = "tensorboard"


class TensorBoardLogger(Logger):
    """Write the curves with ``ember.utils.tensorboard.SummaryWriter`` (needs the tensorboard package)."""

    def __init__(self):
        self.writer = None

    def on_train_start(self, trainer):
        if trainer.is_main:
            from ember.utils.tensorboard import SummaryWriter

            # a resumed run hides what the interrupted one wrote past its checkpoint
            # (the steps of an unfinished epoch): torch's purge_step
            purge = trainer.global_step + 1 if trainer.history else None
            self.writer = SummaryWriter(str(trainer.out / FOLDER), purge_step=purge)

    def log_metrics(self, metrics, step):
        if self.writer is not None:
            for name, value in metrics.items():
                self.writer.add_scalar(name, value, step)

    def on_epoch_end(self, trainer, record):
        if self.writer is not None:
            scalars = {name if name.startswith(("train/", "val/")) else f"epoch/{name}": value
                       for name, value in epoch_scalars(record).items()}
            self.log_metrics(scalars, record["epoch"])
            self.writer.flush()

    def on_train_end(self, trainer):
        if self.writer is not None:
            self.writer.close()
            self.writer = None
