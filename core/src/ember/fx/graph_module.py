"""``GraphModule``: a Module whose ``forward`` is Python code generated from a ``Graph``.

PyTorch counterpart: torch/fx/graph_module.py (v2.13): the module copies from its
root the submodules, parameters and buffers the graph names, ``recompile`` turns
``graph.python_code()`` into ``forward``, and ``code`` shows that source. ember leaves
out pickling a GraphModule (``ember.jit.save`` stores a graph as data instead) and
``print_readable``'s type annotations.
"""

import itertools
import linecache

from ember.nn import Module
from ember.nn.parameter import Parameter
from ember.tensor import Tensor

_SOURCE_IDS = itertools.count()


class GraphModule(Module):
    """Args:
        root: a Module, or a dict ``{qualified name: module or tensor}``, holding what the
            graph's ``get_attr`` and ``call_module`` nodes name.
        graph: the ``Graph`` to run.
        class_name: the name ``repr`` and error messages show.
    """

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        # One class per instance, as in PyTorch: recompile sets `forward` on it.
        self.__class__ = type(class_name, (GraphModule,), {"__module__": GraphModule.__module__})
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _copy_attr(root, self, node.target)
        if isinstance(root, Module):
            self.training = root.training
        self.graph = graph

    @property
    def graph(self):
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, value):
        self.__dict__["_graph"] = value
        self.recompile()

    @property
    def code(self):
        """The source of ``forward``, generated from the graph."""
        return self.__dict__["_code"]

    def __setattr__(self, name, value):
        if name == "graph":
            object.__setattr__(self, name, value)  # the property above
        else:
            super().__setattr__(name, value)

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph`` (call it after editing the graph)."""
        source, globals_ = self.graph.python_code("self")
        filename = f"<ember.fx generated {next(_SOURCE_IDS)}>"
        # Registered with linecache, so tracebacks through forward show the generated lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), globals_)
        self.__dict__["_code"] = source
        type(self).forward = globals_["forward"]
        return source

    def __reduce__(self):
        raise TypeError("a GraphModule is not pickled in ember; save its graph and weights with ember.jit.save")

    def __repr__(self):
        return super().__repr__() + "\n\n" + "\n".join("# " + line for line in self.code.splitlines())


def attribute_source(root, graph, constants):
    """``root`` itself, or (with tensor constants from a trace) a dict naming every
    attribute the graph reads, so the trace never writes into the user's module."""
    if not constants:
        return root
    found = dict(constants)
    for node in graph.nodes:
        if node.op in ("get_attr", "call_module") and node.target not in found:
            found[node.target] = fetch_attr(root, node.target)
    return found


def fetch_attr(root, qualified):
    """``root.a.b.c`` for ``qualified`` = ``"a.b.c"``; RuntimeError naming a missing target."""
    obj = root
    for atom in qualified.split("."):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node referenced nonexistent target {qualified}")
        obj = getattr(obj, atom)
    return obj


def _copy_attr(root, target_module, qualified):
    value = root[qualified] if isinstance(root, dict) else fetch_attr(root, qualified)
    source_parent = None if isinstance(root, dict) else fetch_attr(root, qualified.rpartition(".")[0]) \
        if "." in qualified else root
    *prefix, field = qualified.split(".")
    parent = target_module
    for atom in prefix:
        child = parent._modules.get(atom)
        if child is None:
            child = Module()
            parent.add_module(atom, child)
        parent = child
    if isinstance(value, Module):
        parent.add_module(field, value)
    elif isinstance(value, Parameter):
        parent.register_parameter(field, value)
    elif isinstance(value, Tensor):
        persistent = not (isinstance(source_parent, Module) and field in source_parent._non_persistent_buffers_set)
        parent.register_buffer(field, value, persistent=persistent)
    else:
        setattr(parent, field, value)
