"""Log the gradients' norm at every step, and the epoch's largest and mean.

PyTorch counterpart: none in torch as a callback (``clip_grad_norm_`` returns the total
norm, torch/nn/utils/clip_grad.py); Lightning's lightning/pytorch/utilities/grads.py
``grad_norm(module, norm_type)``, called from a callback's ``on_before_optimizer_step``.
The norm is taken before clipping (``--grad-clip``), as Lightning's: it shows what
clipping had to cut. ``grad_norm`` is the 2-norm over all parameters' gradients;
``per_parameter=True`` adds ``grad_norm/<parameter>`` curves.
"""

import math

from ember.trainer.callbacks.callback import Callback


class GradientNormMonitor(Callback):
    """Log ``grad_norm`` at each step; the epoch's record gains ``grad_norm_max`` and ``grad_norm_mean``."""

    def __init__(self, per_parameter=False):
        self.per_parameter = per_parameter
        self.norms = []

    def on_epoch_start(self, trainer):
        self.norms = []

    def on_before_optimizer_step(self, trainer, loss):
        squares, logged = 0.0, {}
        for name, parameter in trainer.model.named_parameters():
            if parameter.grad is None:
                continue
            norm = float(parameter.grad.detach().double().norm().item())
            squares += norm * norm
            if self.per_parameter:
                logged[f"grad_norm/{name}"] = norm
        total = math.sqrt(squares)
        self.norms.append(total)
        trainer.log_metrics({"grad_norm": total, **logged}, trainer.global_step + 1)

    def on_epoch_end(self, trainer, record):
        if self.norms:
            record["grad_norm_max"] = max(self.norms)
            record["grad_norm_mean"] = sum(self.norms) / len(self.norms)
