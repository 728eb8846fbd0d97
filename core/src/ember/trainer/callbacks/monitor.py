"""The quantities a callback can watch, named as the curves are: ``val/accuracy``,
``val/loss``, ``train/loss``, ``lr``; which way is better; and what counts as better.

PyTorch counterpart: none in torch; the ``monitor``/``mode``/``min_delta`` arguments shared
by Lightning's EarlyStopping and ModelCheckpoint (lightning/pytorch/callbacks/
early_stopping.py, model_checkpoint.py) and Keras' (keras/src/callbacks/monitor_callback.py).
"""

import math

from ember.zoo.errors import ZooError

MODES = ("min", "max")


def monitored_value(record, name):
    """The value of ``name`` in an epoch's record: ``val/<metric>`` (any metric the task or
    ``--metrics`` reports), ``train/loss`` or a top-level field (``lr``); None if absent."""
    group, _, key = name.partition("/")
    if group == "val" and key:
        value = record.get("val", {}).get(key)
    elif name == "train/loss":
        value = record.get("train_loss")
    else:
        value = record.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def default_mode(name):
    """A loss is better lower, anything else (accuracy, f1, map) higher."""
    return "min" if "loss" in name.rsplit("/", 1)[-1] else "max"


def check_mode(mode, name):
    if mode is None:
        return default_mode(name)
    if mode not in MODES:
        raise ZooError(f"mode must be 'min' or 'max', not {mode!r}")
    return mode


def improves(value, best, mode, min_delta=0.0):
    """True when ``value`` beats ``best`` by more than ``min_delta`` in the direction of ``mode``
    (the first value always does; NaN never does)."""
    if value is None or math.isnan(value):
        return False
    if best is None:
        return True
    return value < best - min_delta if mode == "min" else value > best + min_delta


def available(record):
    """The names ``monitored_value`` knows in ``record`` (for the message of a name it does not)."""
    names = [f"val/{key}" for key, value in record.get("val", {}).items() if isinstance(value, (int, float))]
    return names + ["train/loss", "lr"]
