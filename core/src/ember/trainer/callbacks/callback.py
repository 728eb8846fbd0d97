"""The callback protocol of ``ember train``: the hooks a callback may define, and the list
that calls them in order.

PyTorch counterpart: none in torch, which has no trainer; Lightning's
lightning/pytorch/callbacks/callback.py (``Callback``: ``on_train_start``,
``on_train_epoch_end``, ``on_train_batch_end``, ``on_before_optimizer_step``,
``on_validation_end``, ``on_exception``, ...) and Keras' keras/src/callbacks/callback.py and
callback_list.py (``on_epoch_end(epoch, logs)``, ``model.stop_training``). ember keeps
Lightning's names and its ``trainer.should_stop``, with fewer hooks, and passes what a hook
needs as arguments, as Keras does (the loss, the validation metrics, the epoch's record).

# NOTE [ The hooks of a run ]
# The loop in ember/trainer/training.py calls, in this order:
#
#     on_train_start(trainer)              (a resumed run's history is restored; then
#                                          the callbacks' states: load_state_dict)
#     for each epoch:
#         on_epoch_start(trainer)          trainer.epoch: the epoch's index, from 0
#         for each batch:
#             forward, loss, backward
#             on_before_optimizer_step(trainer, loss)    the gradients, not the step
#             optimizer.step(), scheduler.step()
#             on_batch_end(trainer, loss, step)    loss: a float; the global step
#         validation
#         on_validation_end(trainer, metrics)    the task's {"loss": ..., ...}
#         on_epoch_end(trainer, record)    the epoch's record, as metrics.json has it
#     on_train_end(trainer)                also after a stop, not after an exception
#     on_exception(trainer, exception)     instead, on an error or Ctrl-C (re-raised)
#
# A callback stops the run with ``trainer.stop(reason)`` (or sets
# ``trainer.should_stop``, as in Lightning). The loop looks at ``should_stop`` after
# every batch and every epoch: a stop inside an epoch ends it there (without
# validating it, and before the step of a stop asked in ``on_before_optimizer_step``),
# so the last complete epoch's checkpoint stands. The loop then logs the reason and
# writes it into metrics.json (``"stopped"``). Callbacks run in the order given,
# except that each class has an ``order``: monitors (0) add to the epoch's record,
# loggers (1) write it, and the checkpoint (2) saves last, having seen everything
# (Lightning moves its ModelCheckpoint to the end for the same reason).
"""


# NOTE [ A callback's state in the checkpoint ]
# A callback that counts across epochs (EarlyStopping's epochs without improvement,
# ModelCheckpoint's best value) gives its counts as ``state_dict()``, and every
# checkpoint holds them under ``"callbacks"``, keyed by ``state_key`` (the class name
# and the arguments that tell two of a kind apart), as Lightning's checkpoints do. A
# resumed run hands each callback its state back with ``load_state_dict`` right after
# ``on_train_start``; a callback with no state there (one added at the resume, or a
# checkpoint written before callbacks kept state) keeps what ``on_train_start`` made
# of the run's history. ``ember train --resume`` also rebuilds the callbacks
# themselves: the run's callback flags are saved with its options
# (ember/trainer/run_config.py).


def state_key_of(callback, **arguments):
    """``ClassName{'monitor': 'val/accuracy', ...}``: Lightning's ``_generate_state_key``."""
    return f"{type(callback).__qualname__}{arguments!r}"


class Callback:
    """The base of ``ember train``'s callbacks: every hook does nothing (NOTE [ The hooks of a run ])."""

    order = 0  # monitors 0, loggers 1, the checkpoint 2

    @property
    def state_key(self):
        """The name of this callback's state in a checkpoint (NOTE [ A callback's state in
        the checkpoint ]): its class name, unless a subclass adds its arguments."""
        return state_key_of(self)

    def state_dict(self):
        """What a resumed run needs to continue as this one would; {} (nothing) by default."""
        return {}

    def load_state_dict(self, state):
        """Continue from ``state``, this callback's ``state_dict()`` in the checkpoint."""

    def on_train_start(self, trainer):
        """The run begins (``trainer.history`` holds a resumed run's earlier epochs)."""

    def on_epoch_start(self, trainer):
        """Epoch ``trainer.epoch`` (from 0) begins."""

    def on_before_optimizer_step(self, trainer, loss):
        """The batch's gradients are computed; ``loss`` is the batch's loss tensor."""

    def on_batch_end(self, trainer, loss, step):
        """The optimizer has stepped; ``loss`` is the batch's loss (a float), ``step`` the global step."""

    def on_validation_end(self, trainer, metrics):
        """The epoch is validated: ``metrics`` is the task's dict (``loss``, ``accuracy``, ...)."""

    def on_epoch_end(self, trainer, record):
        """The epoch's record (``train_loss``, ``val``, ``lr``, ...) is complete."""

    def on_train_end(self, trainer):
        """The run ends, at its last epoch or stopped."""

    def on_exception(self, trainer, exception):
        """The run fails or is interrupted (the exception is raised again after the hooks):
        put back what the callback changed (a mode, an open file)."""


class CallbackList:
    """The callbacks of a run, called in their ``order`` (stable: the given order within one)."""

    def __init__(self, callbacks):
        self.callbacks = sorted(callbacks, key=lambda callback: callback.order)

    def call(self, hook, trainer, *args):
        for callback in self.callbacks:
            getattr(callback, hook)(trainer, *args)

    def before_step(self, trainer, batch_index, loss):
        """``on_before_optimizer_step`` for batch ``batch_index``; True when a
        callback stopped the run."""
        if not self.callbacks:
            return False
        trainer.batch_index = batch_index
        self.call("on_before_optimizer_step", trainer, loss)
        return trainer.should_stop

    def batch_end(self, trainer, loss):
        """``on_batch_end`` after the step (one more global step); True when a
        callback stopped the run."""
        if not self.callbacks:
            return False
        trainer.global_step += 1
        self.call("on_batch_end", trainer, loss, trainer.global_step)
        return trainer.should_stop

    def state_dicts(self):
        """``{state_key: state}`` of every callback with a state, for the checkpoint."""
        states = {}
        for callback in self.callbacks:
            state = callback.state_dict()
            if state:
                states[callback.state_key] = state
        return states

    def load_state_dicts(self, states):
        """Give each callback its state from a checkpoint's ``states``, where it has one."""
        for callback in self.callbacks:
            if callback.state_key in states:
                callback.load_state_dict(states[callback.state_key])

    def __iter__(self):
        return iter(self.callbacks)
