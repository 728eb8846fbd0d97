"""A logger: a callback that also takes the scalars other callbacks log at a step, and the
flat names under which an epoch's record is written.

PyTorch counterpart: none in torch; Lightning's lightning/pytorch/loggers/logger.py
(``Logger.log_metrics(metrics, step)``), which its callbacks reach through
``trainer.loggers`` as ember's reach theirs through ``trainer.log_metrics``.
"""

from ember.trainer.callbacks.callback import Callback


class Logger(Callback):
    """Writes the run's curves somewhere; ``log_metrics`` takes a step's scalars."""

    order = 1  # after the monitors added to the record (NOTE [ The hooks of a run ])

    def log_metrics(self, metrics, step):
        """``metrics`` (name -> float) at the global ``step``."""


def epoch_scalars(record):
    """An epoch's record as flat curve names: ``train/loss``, ``val/<metric>``, then its other
    numbers (``lr``, ``seconds``, ``grad_norm_max``, ...); ``epoch`` itself left out."""
    scalars = {"train/loss": record["train_loss"]}
    scalars.update({f"val/{name}": value for name, value in record.get("val", {}).items() if is_number(value)})
    scalars.update({name: value for name, value in record.items()
                    if is_number(value) and name not in ("epoch", "train_loss")})
    return scalars


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)
