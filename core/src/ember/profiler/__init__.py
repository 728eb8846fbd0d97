"""``ember.profiler``: which ops a program runs, with their input shapes, CPU time and
memory (NOTE [ The profiler at the dispatcher ] in profiler.py).

PyTorch counterpart: torch/profiler/__init__.py (v2.13).
"""

from ember.profiler.events import EventList, FunctionEvent, FunctionEventAvg
from ember.profiler.profiler import (
                                     ProfilerAction,
                                     ProfilerActivity,
                                     profile,
                                     record_function,
                                     schedule,
                                     tensorboard_trace_handler,
)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity", "profile",
           "record_function", "schedule", "tensorboard_trace_handler"]
