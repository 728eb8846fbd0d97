"""``ember.fx``: capture a Module's ``forward`` as a graph of Python-level calls, edit it,
and run it again as generated Python code.

PyTorch counterpart: torch/fx/__init__.py (v2.13).

>>> import ember
>>> gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1)
>>> [n.op for n in gm.graph.nodes]
['placeholder', 'call_function', 'call_function', 'output']
"""

from ember.fx._symbolic_trace import Tracer, symbolic_trace, wrap
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter, Transformer
from ember.fx.node import Node, map_arg
from ember.fx.proxy import Attribute, Proxy, TraceError
from ember.fx.subgraph_rewriter import replace_pattern

__all__ = ["Attribute", "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "TraceError", "Tracer",
           "Transformer", "map_arg", "replace_pattern", "symbolic_trace", "wrap"]
