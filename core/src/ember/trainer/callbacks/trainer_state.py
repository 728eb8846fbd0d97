"""What a callback's hooks receive as ``trainer``: the run's objects, where it is, and
the switch that stops it.

PyTorch counterpart: none in torch; the part of Lightning's ``Trainer``
(lightning/pytorch/trainer/trainer.py) that callbacks read: ``current_epoch``,
``global_step``, ``should_stop``, ``optimizers``, ``loggers``; and Keras'
``model.stop_training``. ember's loop stays a function (ember/trainer/training.py); this
object is its state, handed to the hooks (NOTE [ The hooks of a run ] in callback.py).
"""


class TrainerState:
    """The running state of one ``ember train`` run, as callbacks see it.

    Attributes: ``model`` (the plain model, not a DDP wrapper), ``optimizer``,
    ``scheduler``, ``config`` (the run's options), ``out`` (the output folder), ``metric``
    (the task's metric, e.g. "accuracy"), ``history`` (the records of finished epochs),
    ``epoch`` (the current epoch's index, from 0), ``batch_index`` (from 0, within the
    epoch), ``global_step`` (optimizer steps taken), ``world_size`` (the ranks of a
    data-parallel run, else 1), ``is_main`` (False on ranks other than 0: they neither log
    nor write), ``should_stop`` and ``stop_reason``. In a data-parallel run every rank must
    stop at the same step (the next all-reduce would wait for a rank that left): decide on
    what every rank sees alike, the averaged gradients and the validation metrics.
    """

    def __init__(self, model, optimizer, scheduler, config, out, metric, history, start_epoch, steps_per_epoch,
                 log, is_main, checkpoint, world_size=1):
        self.model, self.optimizer, self.scheduler, self.config = model, optimizer, scheduler, config
        self.out, self.metric, self.history, self.is_main = out, metric, history, is_main
        self.epoch, self.batch_index = start_epoch, 0
        self.global_step = start_epoch * steps_per_epoch  # (every epoch has as many steps)
        self.should_stop, self.stop_reason, self.stopped_at = False, None, None
        self.loggers, self.world_size = [], world_size
        self._log, self._checkpoint = log, checkpoint

    def stop(self, reason):
        """Stop the run after the current batch or epoch, saying ``reason`` (the
        first reason given wins)."""
        if not self.should_stop:
            self.should_stop, self.stop_reason = True, reason
            self.stopped_at = {"epoch": self.epoch + 1, "batch": self.batch_index,
                               "step": self.global_step}

    def stopped(self):
        """The stop as metrics.json records it (``None`` when the run was not stopped)."""
        if not self.should_stop:
            return None
        reason = self.stop_reason or "a callback set trainer.should_stop"  # (set directly, as in Lightning)
        return {"reason": reason, **(self.stopped_at or {"epoch": self.epoch + 1, "step": self.global_step})}

    def log(self, line):
        """Print ``line`` as the run's log does (rank 0 only)."""
        if self.is_main:
            self._log(line)

    def log_metrics(self, metrics, step):
        """Hand ``metrics`` (name -> float) at ``step`` to the run's loggers (TensorBoard, CSV)."""
        for logger in self.loggers:
            logger.log_metrics(metrics, step)

    def checkpoint(self):
        """The training checkpoint of the last finished epoch: what ``--resume`` continues from."""
        return self._checkpoint()
