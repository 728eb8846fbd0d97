"""Inference tensors: what ``inference_mode`` makes, and what autograd refuses them.

PyTorch counterpart: c10/core/InferenceMode.h, c10/core/TensorImpl.h (a tensor made in
inference mode has no autograd keys and no version counter; VariableVersion's checks)
and the check in torch/csrc/autograd/saved_variable.cpp (v2.13).
"""

import threading

from ember.autograd.grad_mode import grad_state

# NOTE [ Inference tensors ]
# Inside `inference_mode()` nothing is recorded, as under `no_grad`, and more: every
# tensor an op or a factory makes there is an *inference tensor*, with no version
# counter, so that nothing has to be counted for it. Without one, autograd could not
# tell whether it was written after being saved, so PyTorch refuses, outside
# inference mode, to save one for backward (an op recorded with it as a saved input)
# and to write one in place (the write happens, the version bump then raises, as in
# PyTorch). Reading it, and out-of-place ops on it, are fine: they make normal tensors.
#
# ember marks an inference tensor by its version counter: all of them share
# INFERENCE, one counter of a class of its own, in place of their own `[0]`. Views
# share their base's counter, so a view of an inference tensor is one (and a view of
# a normal tensor made inside inference mode is normal), as are `detach()` and a
# Parameter made from one, with no code of their own. Every in-place path already
# bumps `counter[0]`; INFERENCE's `__setitem__` is where the write is refused, so no
# in-place path needs a check, and a normal tensor's bump (a plain list) costs the same.
#
# Marking what an op makes costs a test per op, which the dispatcher's hot path does
# not pay: while some thread is inside inference mode, `Op.__call__` is
# `run_in_modes` (NOTE [ Modes at the dispatcher ] in ember/dispatch_modes.py), which
# marks the outputs when *this* thread is inside it. Factories (`ember.ones`) mark
# theirs in `_make_tensor`.

SAVE_MESSAGE = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                "mode in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                "tensor and use it in autograd, or use `ember.no_grad()` instead of `ember.inference_mode()`.")
INPLACE_MESSAGE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                   "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                   "more details.")
VERSION_MESSAGE = "Inference tensors do not track version counter."
REQUIRES_GRAD_MESSAGE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


class InferenceVersion(list):
    """The version counter every inference tensor shares: it reads 0 and counts
    nothing; a bump outside inference mode is PyTorch's in-place refusal."""

    __slots__ = ()

    def __setitem__(self, index, value):
        if not grad_state.inference:
            raise RuntimeError(INPLACE_MESSAGE)


INFERENCE = InferenceVersion([0])


def is_inference(input):
    """True for a tensor made inside ``inference_mode`` (``torch.is_inference``).

    >>> import ember
    >>> with ember.inference_mode():
    ...     x = ember.ones(2)
    >>> ember.is_inference(x), ember.is_inference(x.clone())
    (True, False)
    """
    return input._version_counter is INFERENCE


def mark(outputs):
    """Make ``outputs`` (tensors an op made inside inference mode) inference tensors."""
    for o in outputs:
        o._version_counter = INFERENCE


_lock = threading.Lock()
_regions = [0]  # inference_mode(True) regions open, in all threads


def enter(on):
    """An ``inference_mode(on)`` region opens: while any is open, ops pass by
    ``run_in_modes``, which marks what they make in a thread that is inside one."""
    if on:
        _count(1)


def leave(on):
    if on:
        _count(-1)


def _count(step):
    from ember.dispatch_modes import modes

    with _lock:
        _regions[0] += step
        modes.set_inference(_regions[0] > 0)
