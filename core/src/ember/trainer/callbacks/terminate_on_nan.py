"""Stop a run at the first batch whose loss is NaN or infinite, naming the step and the
parameters or gradients that went bad.

PyTorch counterpart: none in torch as a callback; Keras' keras/src/callbacks/
terminate_on_nan.py (``TerminateOnNaN``: the loss checked after each batch) and
Lightning's ``Trainer(detect_anomaly=True)`` and ``EarlyStopping(check_finite=True)``.
torch's own tool is anomaly mode (torch/autograd/anomaly_mode.py, ember.autograd
.detect_anomaly), which finds the backward node that first made a NaN, at a cost on every
op; this callback costs nothing per step (the loop reads the loss anyway) and looks at
the parameters only once something has gone wrong.

# NOTE [ Which step went bad ]
# The loss is checked before the optimizer steps, so the parameters the message lists
# are the ones that produced the bad loss, not ones the bad gradients have since
# overwritten; the step is not taken, and the run stops there. The message names the
# epoch and batch (from 1, as the log counts epochs; batch from 0, as an index into the
# epoch's loader), the global step, the non-finite parameters (a huge learning rate
# shows here: weights overflowed to inf on an earlier step) and the non-finite gradients
# (a NaN in the data or a kernel shows here: finite weights, NaN gradients), and, when
# the weights are finite, the largest of them (a learning rate too large shows here:
# weights of 1e29 are finite, but the next forward overflows).
"""

import math

from ember.trainer.callbacks.callback import Callback

LISTED = 4  # names shown per kind before "and N more"


class TerminateOnNaN(Callback):
    """Stop at the first non-finite loss (NOTE [ Which step went bad ])."""

    def on_before_optimizer_step(self, trainer, loss):
        value = float(loss.item())
        if trainer.world_size == 1 and math.isfinite(value):
            return
        bad_parameters, bad_gradients = non_finite(trainer.model)
        if trainer.world_size > 1 and not bad_gradients:  # what every rank has alike decides
            return
        trainer.stop(reason(trainer, value, bad_parameters, bad_gradients))


def reason(trainer, loss, bad_parameters, bad_gradients):
    """The message: where (epoch, batch, step), the loss, then what is non-finite or largest."""
    where = f"epoch {trainer.epoch + 1}, batch {trainer.batch_index} (step {trainer.global_step + 1})"
    if math.isfinite(loss):  # (a data-parallel run: another rank's loss went bad)
        text = f"non-finite gradients at {where} (this rank's loss is {loss:.4f})"
    else:
        text = f"non-finite loss: the loss is {loss} at {where}"
    if bad_parameters:
        text += f"; non-finite parameters: {listing(bad_parameters)}"
    if bad_gradients:
        text += f"; non-finite gradients: {listing(bad_gradients)}"
    if not bad_parameters:  # a learning rate too large shows as huge (finite) weights
        text += f"; the largest parameter: {largest(trainer.model)}"
    if not bad_parameters and not bad_gradients:
        text += "; every parameter and gradient is finite (a NaN in the batch or the forward?)"
    return text


def non_finite(model):
    """The names of the parameters, and of the gradients, holding a NaN or an infinity."""
    import ember

    parameters, gradients = [], []
    for name, parameter in model.named_parameters():
        if not bool(ember.isfinite(parameter.detach()).all()):
            parameters.append(name)
        if parameter.grad is not None and not bool(ember.isfinite(parameter.grad).all()):
            gradients.append(name)
    return parameters, gradients


def largest(model):
    """``'3.weight' (|w| up to 1.2e+29)``: the parameter holding the largest magnitude."""
    sizes = {name: float(parameter.detach().abs().max().item())
             for name, parameter in model.named_parameters() if parameter.numel()}
    name = max(sizes, key=sizes.get)
    return f"{name!r} (|w| up to {sizes[name]:.3g})"


def listing(names):
    shown = ", ".join(repr(name) for name in names[:LISTED])
    return shown if len(names) <= LISTED else f"{shown} and {len(names) - LISTED} more"
