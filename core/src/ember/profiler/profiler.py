"""``ember.profiler.profile``: record every op a region runs (name, input shapes, CPU
time, memory its outputs take) and the ``record_function`` ranges around them, with
torch's schedule and trace handler.

PyTorch counterpart: torch/profiler/profiler.py (``profile``, ``schedule``,
``ProfilerAction``, ``tensorboard_trace_handler``) and torch/autograd/profiler.py
(``record_function``) (v2.13).

# NOTE [ The profiler at the dispatcher ]
# torch's profiler is a callback that the dispatcher runs around every op (RecordFunction,
# aten/src/ATen/record_function.h) plus the Kineto library that collects the events.
# ember's is a mode of its dispatcher (NOTE [ Modes at the dispatcher ]): while a profile
# records, every op call goes through ``Recorder.record_op``, which times it with
# ``time.perf_counter_ns`` and links it to the event open on its thread (an op called by
# another op's kernel, a ``record_function`` range) as its child, so self time is the
# event's time less its children's. Outside a profile, ops pay nothing. Device time is not
# measured: ember's CUDA kernels run asynchronously and the CPU time of the launch is what
# is recorded, as torch's CPU activity.
"""

import enum
import os
import socket
import threading
import time
import traceback

from ember.dispatch_modes import modes
from ember.profiler.events import EventList, FunctionEvent


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Which action each step takes: skip ``skip_first`` steps, then cycles of ``wait``
    idle, ``warmup`` and ``active`` recorded steps (the last saves), ``repeat`` times (0:
    forever), as torch's ``schedule``."""
    if warmup == 0 and active == 0:
        raise ValueError("Invalid profiler schedule arguments")

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step >= wait:
            step -= wait  # the first cycle starts without waiting
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each recorded cycle as a Chrome trace into
    ``dir_name`` (``<worker>.<time>.pt.trace.json``, the name TensorBoard's profiler
    plugin and Perfetto read)."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil

            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)

    return handler


class Recorder:
    """Collects events while a profile records (NOTE [ The profiler at the dispatcher ])."""

    def __init__(self, record_shapes, profile_memory, with_stack):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.events = []
        self.open = threading.local()

    def begin(self, name, inputs=(), user=False):
        shapes = [list(getattr(x, "shape", ())) for x in inputs] if self.record_shapes else []
        stack = _user_stack() if self.with_stack else ()
        event = FunctionEvent(name, 0.0, 0.0, threading.get_ident(), shapes, stack=stack, is_user_annotation=user)
        opened = getattr(self.open, "stack", None)
        if opened is None:
            opened = self.open.stack = []
        if opened:
            event.cpu_parent = opened[-1]
            opened[-1].cpu_children.append(event)
        opened.append(event)
        self.events.append(event)
        event.time_range = (time.perf_counter_ns() / 1e3, 0.0)
        return event

    def end(self, event):
        event.time_range = (event.time_range[0], time.perf_counter_ns() / 1e3)
        self.open.stack.pop()

    def record_op(self, op, inputs, attrs, run):
        event = self.begin(op.qualname, inputs)
        try:
            result = run(op, *inputs, **attrs)
        finally:
            self.end(event)
        if self.profile_memory:
            event.cpu_memory_usage = _nbytes(result)
        return result


def _nbytes(result):
    outputs = result if isinstance(result, tuple) else (result,)
    return sum(getattr(getattr(o, "_data", None), "nbytes", 0) for o in outputs)


def _user_stack():
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if f"{os.sep}ember{os.sep}" not in f.filename]


class profile:
    """Record the ops a region runs: ``with profile(record_shapes=True) as prof: ...``,
    then ``prof.key_averages().table(sort_by="cpu_time_total")``. With a ``schedule``,
    ``prof.step()`` after each training step decides which steps are recorded, and
    ``on_trace_ready(prof)`` runs at the end of each recorded cycle."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None):
        self.activities = set(activities or [ProfilerActivity.CPU])
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.options = (record_shapes, profile_memory, with_stack)
        self.profile_memory = profile_memory
        self.record_shapes = record_shapes
        self.step_num = 0
        self.current_action = ProfilerAction.RECORD
        self.recorder = None
        self._events = EventList()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.current_action = self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD
        if self.current_action in _RECORDING:
            self._begin()

    def stop(self):
        if self.recorder is not None:
            self._finish(save=self.schedule is not None or self.on_trace_ready is not None)

    def step(self):
        """Mark the end of a step (with a ``schedule``: start or end recording)."""
        if self.schedule is None:
            return
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE and self.recorder is not None:
            self._finish(save=True)
        if self.current_action in _RECORDING and self.recorder is None:
            self._begin()

    def _begin(self):
        if modes.profile is not None:
            raise RuntimeError("ember.profiler: another profile is already recording")
        self.recorder = Recorder(*self.options)
        modes.set_profile(self.recorder)

    def _finish(self, save):
        modes.set_profile(None)
        events = sorted(self.recorder.events, key=lambda e: e.time_range[0])
        for event in reversed(events):  # a range holds what the ops inside it allocated
            if event.is_user_annotation:
                event.cpu_memory_usage = sum(child.cpu_memory_usage for child in event.cpu_children)
        self._events = EventList(events, self.profile_memory, with_shapes=False)
        self.recorder = None
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def events(self):
        """The events of the last recorded cycle, in start order."""
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)


class record_function:
    """A named range in the profile (``with record_function("forward"): ...`` or as a
    decorator); nothing outside a profile."""

    def __init__(self, name, args=None):
        self.name = name
        self.event = None

    def __enter__(self):
        recorder = modes.profile
        self.recorder = recorder
        if recorder is not None:
            self.event = recorder.begin(self.name, user=True)
        return self

    def __exit__(self, *exc):
        if self.event is not None:
            self.recorder.end(self.event)
            self.event = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapped
