"""``ember.trainer.callbacks``: what ``ember train`` calls around its loop's steps: the
protocol (``Callback``, the ``trainer`` its hooks receive) and the callbacks the CLI offers.

PyTorch counterpart: none in torch, which has no trainer; Lightning's
lightning/pytorch/callbacks/ (one file per callback, as here) and loggers/, and Keras'
keras/src/callbacks/. NOTE [ The hooks of a run ] (callback.py) lists the hooks and when
they run.

    >>> from ember.trainer import training
    >>> from ember.trainer.callbacks import EarlyStopping, CSVLogger
    >>> training.train("resnet8_cifar", "digits", "runs/digits", epochs=20,   # doctest: +SKIP
    ...                callbacks=[EarlyStopping("val/accuracy", patience=3), CSVLogger()])
"""

from ember.trainer.callbacks.anomaly import AnomalyDetection
from ember.trainer.callbacks.callback import Callback, CallbackList
from ember.trainer.callbacks.csv_logger import CSVLogger
from ember.trainer.callbacks.early_stopping import EarlyStopping
from ember.trainer.callbacks.gradient_norm import GradientNormMonitor
from ember.trainer.callbacks.logger import Logger
from ember.trainer.callbacks.lr_monitor import LearningRateMonitor
from ember.trainer.callbacks.model_checkpoint import ModelCheckpoint
from ember.trainer.callbacks.plot import PlotCurves
from ember.trainer.callbacks.profiler import StepProfiler
from ember.trainer.callbacks.tensorboard_logger import TensorBoardLogger
from ember.trainer.callbacks.terminate_on_nan import TerminateOnNaN
from ember.trainer.callbacks.trainer_state import TrainerState

__all__ = ["AnomalyDetection", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "GradientNormMonitor",
           "LearningRateMonitor", "Logger", "ModelCheckpoint", "PlotCurves", "StepProfiler", "TensorBoardLogger",
           "TerminateOnNaN", "TrainerState", "with_defaults"]


def with_defaults(callbacks=(), tensorboard=False):
    """The callbacks of a run: ``callbacks``, a ``TensorBoardLogger`` with ``tensorboard``,
    and the ones every run has unless given: ``TerminateOnNaN`` and ``ModelCheckpoint``
    (as Lightning adds its ModelCheckpoint unless the user passes one)."""
    chosen = list(callbacks)
    if tensorboard and not any(isinstance(c, TensorBoardLogger) for c in chosen):
        chosen.append(TensorBoardLogger())
    for default in (TerminateOnNaN, ModelCheckpoint):
        if not any(isinstance(c, default) for c in chosen):
            chosen.append(default())
    return CallbackList(chosen)
