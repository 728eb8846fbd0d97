"""The run's curves as CSV (``--log csv``): ``OUT/metrics.csv``, one row per epoch, and
``OUT/steps.csv``, one row per step.

PyTorch counterpart: none in torch; Lightning's lightning/pytorch/loggers/csv_logs.py
(``CSVLogger``: metrics.csv) and Keras' keras/src/callbacks/csv_logger.py (one row per
epoch). ember keeps epochs and steps in two files, so that each has one row per x value
and a spreadsheet plots either without filtering. metrics.csv is rewritten whole from
the run's history at each epoch's end (atomically: a resumed run's rows come from its
checkpoint); steps.csv grows by each epoch's rows. Rank 0 alone writes.
"""

import csv
import io

from ember.trainer.callbacks.logger import Logger, epoch_scalars

EPOCHS = "metrics.csv"
STEPS = "steps.csv"


class CSVLogger(Logger):
    """Write ``metrics.csv`` (epoch, step, train/loss, val/..., lr, ...) and ``steps.csv`` (step,
    epoch, batch, train/loss and what callbacks log per step: lr, grad_norm)."""

    def __init__(self):
        self.rows = {}  # this epoch's steps: step -> row

    def on_train_start(self, trainer):
        self.rows = {}
        if trainer.is_main:  # a steps.csv from before the last checkpoint keeps only its epochs
            keep_epochs(trainer.out / STEPS, len(trainer.history))

    def on_batch_end(self, trainer, loss, step):
        row = self.rows.setdefault(step, {"step": step})
        row.update({"epoch": trainer.epoch + 1, "batch": trainer.batch_index, "train/loss": loss})

    def log_metrics(self, metrics, step):
        self.rows.setdefault(step, {"step": step}).update(metrics)

    def on_epoch_end(self, trainer, record):
        if trainer.is_main:
            write_rows(trainer.out / EPOCHS, epoch_rows(trainer.history))
        self._flush_steps(trainer)

    def on_train_end(self, trainer):
        self._flush_steps(trainer)  # (the steps of an epoch a callback stopped)

    def _flush_steps(self, trainer):
        if trainer.is_main and self.rows:
            append_rows(trainer.out / STEPS, list(self.rows.values()))
        self.rows = {}


def epoch_rows(history):
    """metrics.csv's rows: the epoch, the global step it ended at, and its record's numbers."""
    rows, step = [], 0
    for record in history:
        step += record["steps"]
        rows.append({"epoch": record["epoch"], "step": step, **epoch_scalars(record)})
    return rows


def columns(rows):
    """Every key of ``rows``, in the order first seen."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_rows(path, rows):
    """Write ``rows`` as a whole CSV file, atomically (as ``ember.save``: ember/serialization/atomic.py)."""
    from ember.serialization.atomic import atomic_write

    text = io.StringIO()
    writer = csv.DictWriter(text, columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "w") as f:
        f.write(text.getvalue())


def append_rows(path, rows):
    """Add ``rows`` to the CSV file ``path`` under its header (made from ``rows`` if the file is new)."""
    if not path.exists():
        write_rows(path, rows)
        return
    with open(path, newline="") as f:
        header = next(csv.reader(f), None) or columns(rows)
    with open(path, "a", newline="") as f:
        csv.DictWriter(f, header, extrasaction="ignore", lineterminator="\n").writerows(rows)


def keep_epochs(path, epochs):
    """Drop the rows of ``path`` (steps.csv) past epoch ``epochs``: all of them for a new run."""
    if not path.exists():
        return
    with open(path, newline="") as f:
        rows = [row for row in csv.DictReader(f) if epochs and int(row["epoch"]) <= epochs]
    if rows:
        write_rows(path, rows)
    else:
        path.unlink()
