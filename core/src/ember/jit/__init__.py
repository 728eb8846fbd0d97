"""``ember.jit``: trace the operators a program runs into a graph, and save or load that
graph with its weights in a file that loads without running any stored code.

PyTorch counterpart: torch/jit/__init__.py (v2.13): ``trace``, ``save``, ``load``.
ember has no TorchScript compiler: a traced graph is an ``ember.fx.GraphModule`` whose
nodes are ember ops, and ``script`` returns its argument, run eagerly (NOTE
[ ember.jit.script runs eagerly ] in _script.py).
"""

from ember.jit._script import annotate, export, ignore, is_scripting, is_tracing, script, unused
from ember.jit._serialization import JitFormatError, load, save
from ember.jit._trace import TracingError, trace

__all__ = ["JitFormatError", "TracingError", "load", "save", "trace", "script", "ignore", "unused", "export",
           "is_scripting", "is_tracing", "annotate"]
