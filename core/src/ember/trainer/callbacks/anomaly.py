"""Run a whole training under anomaly mode (``--detect-anomaly``).

PyTorch counterpart: torch/autograd/anomaly_mode.py (``set_detect_anomaly``: ember
.autograd's) turned on for a run, as Lightning's ``Trainer(detect_anomaly=True)``
(lightning/pytorch/trainer/trainer.py) does. The first backward function that returns
a NaN raises a RuntimeError naming it, with the stack of the forward call that made its
node as a warning; the run ends there (unlike TerminateOnNaN, which stops cleanly at the
loss). Every op then records its stack and every gradient is scanned: slow, for the run
that TerminateOnNaN has said goes wrong. The mode is put back at the end, and after an
exception too.
"""

from ember.trainer.callbacks.callback import Callback


class AnomalyDetection(Callback):
    """Anomaly mode from the run's start to its end (or exception)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.mode = None

    def on_train_start(self, trainer):
        from ember.autograd import set_detect_anomaly

        self.mode = set_detect_anomaly(True, check_nan=self.check_nan)
        trainer.log("anomaly mode is on: every op records its stack, every gradient "
                    "is checked for NaN")

    def on_train_end(self, trainer):
        self._restore()

    def on_exception(self, trainer, exception):
        self._restore()

    def _restore(self):
        if self.mode is not None:
            self.mode.__exit__(None, None, None)
            self.mode = None
