"""The dispatcher's modes: ``ember.autocast``, ``ember.jit.trace``,
``ember.inference_mode``, a checkpointed forward (``ember.utils.checkpoint``), the
profiler (``ember.profiler``), ``ember.func.vmap`` and forward AD's dual levels, which
of them are on,
and how an op runs through them.

PyTorch counterpart: c10/core/impl/LocalDispatchKeySet.h (the thread-local set of
included keys that turns AutocastCPU, Tracer and FuncTorchBatched on for a region)
and the kernels of those keys, which do their part and pass the call on (v2.13). ember's modes are
global, not per thread, as its autocast state is; inference mode is per thread, so its
slot is on while any thread is inside it, and `run_in_modes` asks this thread's
state. See NOTE [ Modes at the dispatcher ].
"""

from ember import dispatcher
from ember.autograd import inference
from ember.autograd.grad_mode import grad_state
from ember.autograd.inference import INFERENCE

# NOTE [ Modes at the dispatcher ]
# `dispatch` (ember/dispatcher.py) runs five steps for every op (NOTE [ The dispatch
# path ]). A mode changes what happens around those steps for a region of a program:
# autocast casts the inputs before them (NOTE [ Autocast at the dispatcher ],
# ember/amp/state.py), a jit.trace in progress sees the op after them (NOTE [ Tracing
# at the dispatcher ], ember/jit/_trace.py). Modes are rare and the steps run for every
# op, so the test "is any mode on?" is made when a mode turns on or off, not per op:
# while one is on, `Op.__call__` is `run_in_modes`, which calls `dispatch` inside the
# modes; when the last turns off, it is `dispatch` again, and an op pays nothing for
# the modes. PyTorch also decides ahead of the call where it can: an operator's
# dispatch table is filled when a kernel registers, so a call never searches it.
# Each mode's code stays in its own package; here is only the slot it fills while it
# is on. A new mode (the profiler, vmap) is a slot here and a line in `run_in_modes`,
# never a branch in dispatch. The order is PyTorch's key order: AutocastCPU sits above
# Tracer, so a trace records the op with its inputs already cast.


class DispatchModes:
    """Which modes are on: ``active`` is true while any is."""

    __slots__ = ("active", "autocast", "trace", "inference", "checkpoint", "profile", "vmap", "forward_ad")

    def __init__(self):
        self.active = False
        self.autocast = None  # cast(op, inputs), while an ember.autocast region is open
        self.trace = None  # the recorder of the jit.trace in progress: record(...), rebind(...)
        self.inference = False  # some thread is inside inference_mode (NOTE [ Inference tensors ])
        self.checkpoint = None  # a checkpointed forward in progress: saw(inputs) (ember/utils/checkpoint.py)
        self.profile = None  # the recorder of a recording profile: record_op(...) (ember/profiler)
        self.vmap = None  # the running vmaps: run(op, inputs, attrs) (ember/func/batching.py)
        self.forward_ad = None  # while a dual level is open: after_op(...), after_write(...) (autograd/forward_grad.py)

    def set_autocast(self, cast):
        """``cast(op, inputs)`` casts every op's inputs from now on; None turns autocast off."""
        self.autocast = cast
        self._update()

    def set_trace(self, recorder):
        """``recorder.record`` sees every op from now on; None ends the trace."""
        self.trace = recorder
        self._update()

    def set_inference(self, on):
        """Whether some thread is inside ``inference_mode`` (ember/autograd/inference.py)."""
        self.inference = on
        self._update()

    def set_checkpoint(self, capture):
        """``capture.saw(inputs)`` sees every op's inputs from now on; None turns it off."""
        self.checkpoint = capture
        self._update()

    def set_profile(self, recorder):
        """``recorder.record_op`` times every op from now on; None ends the recording."""
        self.profile = recorder
        self._update()

    def set_vmap(self, interpreter):
        """``interpreter.run`` sees every op from now on; None when the last vmap ends."""
        self.vmap = interpreter
        self._update()

    def set_forward_ad(self, forward):
        """``forward.after_op`` gives every op's outputs their tangents from now on; None
        when the last dual level closes (ember/autograd/forward_ad.py)."""
        self.forward_ad = forward
        self._update()

    def _update(self):
        # The one test for all the modes, made here rather than in every op call.
        self.active = (self.autocast is not None or self.trace is not None or self.inference
                       or self.checkpoint is not None or self.profile is not None or self.vmap is not None
                       or self.forward_ad is not None)
        if self.profile is not None:  # outermost: the profile times the other modes' work too
            dispatcher.Op.__call__ = run_profiled
        else:
            dispatcher.Op.__call__ = run_in_modes if self.active else dispatcher.dispatch


modes = DispatchModes()
NOT_BATCHED = object()  # the vmap mode's answer for a call with no batched input


def run_profiled(op, *inputs, **attrs):
    """``Op.__call__`` while a profile records: the profiler times ``run_in_modes``
    (NOTE [ The profiler at the dispatcher ], ember/profiler/profiler.py)."""
    return modes.profile.record_op(op, inputs, attrs, run_in_modes)


# qualname -> {device type: kernel(*inputs, **attrs)}: the ops with an autocast kernel of
# their own (ember.library.register_autocast_kernel), run in place of the op while their
# device type autocasts, as PyTorch runs a kernel registered at an Autocast dispatch key
autocast_kernels = {}


def _autocast_kernel(kernels, inputs):
    """The autocast kernel of ``kernels`` for the device type of the first tensor in
    ``inputs``, if that device type autocasts now; else None."""
    from ember.amp.state import autocast_state

    for x in inputs:
        if hasattr(x, "_device"):
            return kernels.get(x._device.type) if x._device.type in autocast_state.dtypes else None
    return None


def run_in_modes(op, *inputs, **attrs):
    """``Op.__call__`` while a mode is on: ``dispatch`` inside every mode that is on,
    outermost first; autocast casts the inputs, the op runs, inside inference mode
    what it made becomes inference tensors (a view keeps its base's kind), a trace
    records it. Inside vmap a call with a batched input goes to its batch rule, whose
    ops on the physical tensors come back here (NOTE [ vmap at the dispatcher ])."""
    if modes.vmap is not None:  # outermost, as torch's FuncTorchBatched key
        result = modes.vmap.run(op, inputs, attrs)
        if result is not NOT_BATCHED:
            return result
    if modes.autocast is not None:
        kernels = autocast_kernels.get(op.qualname)
        own = kernels and _autocast_kernel(kernels, inputs)
        if own is not None:  # the op's own autocast kernel casts and runs it
            return own(*inputs, **attrs)
        inputs = modes.autocast(op, inputs)
    if modes.checkpoint is not None:
        modes.checkpoint.saw(inputs)
    result = dispatcher.dispatch(op, *inputs, **attrs)
    if modes.forward_ad is not None:
        modes.forward_ad.after_op(op, inputs, attrs, result)
    if modes.inference and grad_state.inference and not op.view:
        if op.num_outputs == 1:  # inlined: this runs for every op inside inference mode
            result._version_counter = INFERENCE
        else:
            inference.mark(result)
    if modes.trace is not None:
        outputs = (result,) if op.num_outputs == 1 else result
        modes.trace.record(op, inputs, attrs, outputs)
    return result
