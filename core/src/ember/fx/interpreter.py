"""``Interpreter`` runs a ``GraphModule`` node by node; ``Transformer`` re-traces it into a
new graph, one overridable method per opcode.

PyTorch counterpart: torch/fx/interpreter.py (v2.13). Subclass either and override
``call_function``, ``call_module``, ... to observe or rewrite what each node does.
"""

from ember.fx.graph import Graph
from ember.fx.node import map_aggregate, map_arg
from ember.fx.proxy import Proxy


class Interpreter:
    """Runs ``module.graph`` on concrete values.

    Args:
        module: the ``GraphModule`` (or any Module with a ``graph``) to run.
        garbage_collect_values: drop each value after its last use.
        graph: run this graph instead of ``module.graph``.
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env = {}
        self.user_to_last_uses = {}
        if garbage_collect_values:
            last = {}
            for node in self.graph.nodes:
                for used in node.all_input_nodes:
                    last[used] = node
            for used, user in last.items():
                self.user_to_last_uses.setdefault(user, []).append(used)

    def run(self, *args, initial_env=None):
        """Run the graph on ``args``; returns what its output node returns."""
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            for dead in self.user_to_last_uses.get(node, ()):
                self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per opcode -----------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]  # the argument's default value
            raise RuntimeError(f"Expected positional argument for parameter {target}, "
                               "but one was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # --- helpers -------------------------------------------------------------------------
    def fetch_attr(self, target):
        obj = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n):
        return map_arg((n.args, n.kwargs), self.env.__getitem__)


class Transformer(Interpreter):
    """Runs the graph on Proxies into a new graph; ``transform()`` returns the new
    ``GraphModule``. An override may return any traced expression, e.g.
    ``ember.sigmoid(args[0])`` in place of a relu."""

    def __init__(self, module):
        from ember.fx._symbolic_trace import Tracer

        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module
        self.tracer.tensor_constants = {}
        self.tracer._attr_nodes = {}
        self.tracer._module_paths = {id(m): name for name, m in module.named_modules(remove_duplicate=False)}
        self.tracer._tensor_paths = {}
        for name, t in list(module.named_buffers(remove_duplicate=False)) + \
                list(module.named_parameters(remove_duplicate=False)):
            self.tracer._tensor_paths.setdefault(id(t), name)

    def placeholder(self, target, args, kwargs):
        default = args if args else ()
        return Proxy(self.new_graph.placeholder(target, *default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return Proxy(self.new_graph.get_attr(target), self.tracer)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def transform(self):
        """The new ``GraphModule``."""
        from ember.fx._symbolic_trace import _Patcher
        from ember.fx.graph_module import GraphModule, attribute_source

        with _Patcher(self.tracer, self.module.forward):
            result = super().run()
        self.new_graph.output(self.tracer.create_arg(map_aggregate(result, lambda x: x)))
        source = attribute_source(self.module, self.new_graph, self.tracer.tensor_constants)
        return GraphModule(source, self.new_graph, type(self.module).__name__)
