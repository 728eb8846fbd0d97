"""``symbolic_trace`` and ``Tracer``: run ``forward`` on ``Proxy`` values and record a ``Graph``.

PyTorch counterpart: torch/fx/_symbolic_trace.py (v2.13): ``Tracer`` (``trace``,
``is_leaf_module``, ``call_module``, ``create_arg``, ``getattr``), ``wrap`` and
``symbolic_trace``.

See NOTE [ How ember's tracer sees function calls ] for how ``ember.relu(proxy)`` is
recorded without PyTorch's ``__torch_function__``.
"""

import functools
import inspect
import sys

from ember.fx.graph import Graph
from ember.fx.node import Node, map_aggregate
from ember.fx.proxy import Proxy, TraceError

# NOTE [ How ember's tracer sees function calls ]
# A Proxy's methods and operators record themselves (`x.relu()`, `x + 1`). A free
# function such as `ember.cat([a, b])` or `F.gelu(x)` would run its kernel on the Proxy
# and fail, so while a trace runs the tracer replaces, in the `ember` and
# `ember.nn.functional` namespaces, in ember's (and its plugins') modules that a traced
# `forward` names, and in the globals of every traced `forward`, each ember function by
# a wrapper: with a Proxy among its arguments it records a
# `call_function` node for the original function; otherwise it calls it. `wrap("name")`
# adds a user's own global function to that list (PyTorch's `torch.fx.wrap`). The
# namespaces are restored when the trace ends, even when it fails.

# NOTE [ Tracing with example inputs ]
# PyTorch's symbolic trace refuses `if x.shape[1] > n:` (a Proxy has no value); the
# zoo's GPT, seq2seq and detector check their input shapes exactly so. Given example
# inputs, ember's tracer runs every node on the examples as it records it (node.meta
# ["example_value"]), answers shape queries (`shape`, `dim()`, `size()`, ...), `bool()`,
# `len()` and iteration from them, and bakes the answers into the graph, as
# torch.jit.trace does; arguments past the examples keep their default values. The graph
# is then valid for inputs of those shapes: a reader sees the specialised sizes as
# constants in the generated code.

_WRAPPED_GLOBALS = []  # (globals dict, name) registered by `wrap`


def wrap(fn_or_name):
    """Record calls of a module-level function as ``call_function`` nodes instead of tracing
    through it (called at module scope, like ``torch.fx.wrap``); returns its argument."""
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _WRAPPED_GLOBALS.append((caller.f_globals, name))
    return fn_or_name


class Tracer:
    """Records a ``Graph`` from a module or function. Subclass and override
    ``is_leaf_module`` to keep more modules as single ``call_module`` nodes."""

    def __init__(self, autowrap_functions=()):
        self.autowrap_functions = tuple(autowrap_functions)
        self.graph = None
        self.root = None
        self.example_inputs = None
        self.executing = False  # running real values (example inputs): the wrappers stand aside

    # --- the decisions a subclass may change -------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """ember's own layers (ember.nn and first-party plugins, not the zoo) are leaves,
        except ``Sequential``, like PyTorch's rule for torch.nn."""
        from ember.nn import Sequential

        package = type(m).__module__
        ours = package.startswith("ember.nn") or (package.startswith("ember_") and not package.startswith("ember_zoo"))
        return ours and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """``module.attr``: parameters and buffers of the root become ``get_attr`` proxies."""
        from ember.tensor import Tensor

        if not isinstance(attr_val, Tensor) or id(attr_val) not in self._tensor_paths:
            return attr_val
        return Proxy(self._tensor_node(attr_val), self)

    # --- building nodes ------------------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs), name, type_expr)
        if self.example_inputs is not None and kind != "placeholder":  # a placeholder's is set by the caller
            node.meta["example_value"] = self._run_example(node, args, kwargs)
        return Proxy(node, self)

    def _run_example(self, node, args, kwargs):
        # NOTE [ Tracing with example inputs ]: the node runs on the example values at
        # once, with the trace-time wrappers switched off for the duration.
        args, kwargs = map_aggregate((args, kwargs), _example_of)
        self.executing = True
        try:
            if node.op == "call_function":
                return node.target(*args, **kwargs)
            if node.op == "call_method":
                return getattr(args[0], node.target)(*args[1:], **kwargs)
            if node.op == "call_module":
                return self.root.get_submodule(node.target)(*args, **kwargs)
            return _fetch_attr(self.root, node.target, self.tensor_constants)
        finally:
            self.executing = False

    def create_arg(self, a):
        """Turn an argument into graph data: Proxies become their nodes, the root's
        tensors ``get_attr`` nodes, other tensors constants stored on the root."""
        from ember.nn import Module
        from ember.tensor import Tensor

        def convert(x):
            if isinstance(x, Proxy):
                if x.tracer is not self:
                    raise TraceError("a Proxy from another trace was used in this one")
                return x.node
            if isinstance(x, Tensor):
                return self._tensor_node(x)
            if isinstance(x, Module):
                raise TraceError(f"a module ({type(x).__name__}) cannot be an argument of a traced call")
            return x
        return map_aggregate(a, convert)

    def _tensor_node(self, tensor):
        # One get_attr node per tensor: a parameter read twice is one value.
        path = self._tensor_paths.get(id(tensor))
        if path is None:
            path = f"_tensor_constant{len(self.tensor_constants)}"
            self.tensor_constants[path] = tensor
            self._tensor_paths[id(tensor)] = path
        if path not in self._attr_nodes:
            self._attr_nodes[path] = self.create_node("get_attr", path, (), {})
            if self.example_inputs is not None:
                self._attr_nodes[path].meta["example_value"] = tensor
        return self._attr_nodes[path]

    # --- the trace -------------------------------------------------------------------------
    def trace(self, root, concrete_args=None, example_inputs=None):
        """Run ``root`` (a Module or a function) on Proxies; returns the recorded ``Graph``.
        With ``example_inputs`` (a tuple), shape queries and branches are answered from
        the examples (NOTE [ Tracing with example inputs ])."""
        from ember.nn import Module

        self.example_inputs = None if example_inputs is None else tuple(example_inputs)

        self.graph = Graph()
        self.root = root if isinstance(root, Module) else Module()
        self.tensor_constants = {}
        self._attr_nodes = {}
        self._module_paths = {id(m): name for name, m in self.root.named_modules(remove_duplicate=False)}
        self._tensor_paths = {}
        for name, t in list(self.root.named_buffers(remove_duplicate=False)) + \
                list(self.root.named_parameters(remove_duplicate=False)):
            self._tensor_paths.setdefault(id(t), name)
        fn = type(root).forward if isinstance(root, Module) else root
        args = self._placeholders(fn, concrete_args or {}, skip_self=isinstance(root, Module))
        if isinstance(root, Module):
            args = [root] + args
        with _Patcher(self, fn):
            result = fn(*args)
        # The placeholders and the output go through create_node too, so a subclass that
        # overrides it sees every node, as torch's Tracer does.
        self.create_node("output", "output", (self.create_arg(result),), {}, name="output")
        for node in self.graph.nodes:
            node.meta.pop("example_value", None)  # the graph keeps no activations alive
        return self.graph

    def _placeholders(self, fn, concrete_args, skip_self):
        parameters = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        unknown = set(concrete_args) - {p.name for p in parameters}
        if unknown:
            raise TraceError(f"concrete_args names arguments that {fn.__name__} does not take: {sorted(unknown)}")
        values = []
        for p in parameters:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TraceError(f"cannot trace {fn.__name__}: *args and **kwargs arguments are not supported "
                                 f"by ember's tracer; give the function named arguments")
            if p.name in concrete_args:
                values.append(concrete_args[p.name])  # baked into the graph, as in PyTorch
                continue
            default = () if p.default is p.empty else (p.default,)
            if self.example_inputs is not None and len(values) >= len(self.example_inputs) and default:
                values.append(default[0])  # past the examples, an argument keeps its default, baked in
                continue
            proxy = self.create_proxy("placeholder", p.name, default, {}, name=p.name)
            if self.example_inputs is not None and len(values) < len(self.example_inputs):
                proxy.node.meta["example_value"] = self.example_inputs[len(values)]
            values.append(proxy)
        return values

    def to_bool(self, proxy):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")


class _Patcher:
    """Installs the trace-time wrappers (NOTE [ How ember's tracer sees function calls ])
    and removes them on exit."""

    def __init__(self, tracer, fn):
        self.tracer = tracer
        self.fn = fn
        self.saved = []  # (namespace dict, name, original value)

    def __enter__(self):
        import ember
        from ember.nn import Module, functional

        tracer = self.tracer
        cache = {}
        original_call = Module.__call__
        original_getattr = Module.__getattr__

        def module_call(mod, *args, **kwargs):
            if tracer.executing:
                return original_call(mod, *args, **kwargs)
            return tracer.call_module(mod, lambda *a, **k: original_call(mod, *a, **k), args, kwargs)

        def module_getattr(mod, name):
            if tracer.executing:
                return original_getattr(mod, name)
            return tracer.getattr(name, original_getattr(mod, name), cache)

        self._set(Module.__dict__, Module, "__call__", module_call)
        self._set(Module.__dict__, Module, "__getattr__", module_getattr)
        wrapped = {}
        for namespace in [ember, functional] + self._ember_modules_in_forwards():
            for name, value in list(vars(namespace).items()):
                if _is_ember_function(value):
                    wrapped[id(value)] = self._wrapper(value)
                    self._set(vars(namespace), namespace, name, wrapped[id(value)])
        lookup = vars(functional)["__getattr__"]
        self._set(vars(functional), functional, "__getattr__", lambda name: self._looked_up(functional, lookup, name))
        for globals_ in self._forward_globals():
            for name, value in list(globals_.items()):
                if id(value) not in wrapped and _is_ember_function(value):
                    wrapped[id(value)] = self._wrapper(value)  # `from ember_norm.functional import batch_norm`
                if id(value) in wrapped and globals_.get(name) is value:
                    self._set(globals_, None, name, wrapped[id(value)])
        root = self.tracer.root
        for m in root.modules() if isinstance(root, Module) else ():
            for name, value in list(vars(m).items()):  # `self.activation = F.relu`
                if _is_ember_function(value):
                    self._set(vars(m), None, name, wrapped.get(id(value)) or self._wrapper(value))
        for globals_, name in _WRAPPED_GLOBALS:
            if name in globals_:
                self._set(globals_, None, name, self._wrapper(globals_[name]))
        for fn in self.tracer.autowrap_functions:
            module = sys.modules.get(fn.__module__)
            if module is not None and getattr(module, fn.__name__, None) is fn:
                self._set(vars(module), module, fn.__name__, self._wrapper(fn))
        return self

    def __exit__(self, *exc):
        for namespace, owner, name, value in reversed(self.saved):
            if owner is None:
                namespace[name] = value
            else:
                setattr(owner, name, value)
        return False

    def _looked_up(self, module, lookup, name):
        """A plugin's function found by ``module.__getattr__``, wrapped. The lookup wrote
        the bare function into the module (NOTE [ Remembered lookups ] in
        ember/plugins/lookup.py): the wrapper replaces it there until the trace ends."""
        wrapper = self._wrapper(lookup(name))
        if name in vars(module):
            self._set(vars(module), None, name, wrapper)
        return wrapper

    def _set(self, namespace, owner, name, value):
        self.saved.append((namespace, owner, name, namespace[name]))
        if owner is None:
            namespace[name] = value
        else:
            setattr(owner, name, value)

    def _forward_globals(self):
        from ember.nn import Module

        seen = {id(self.fn.__globals__): self.fn.__globals__} if hasattr(self.fn, "__globals__") else {}
        root = self.tracer.root
        for m in root.modules() if isinstance(root, Module) else ():
            forward = getattr(type(m).forward, "__globals__", None)
            if forward is not None:
                seen.setdefault(id(forward), forward)
        return seen.values()

    def _ember_modules_in_forwards(self):
        """Modules of ember and its plugins that a traced forward names (``F`` for
        ``ember_norm.functional``): their functions are wrapped too."""
        import types

        found = {}
        for globals_ in self._forward_globals():
            for value in list(globals_.values()):
                if isinstance(value, types.ModuleType) and value.__name__.split(".")[0].startswith("ember") \
                        and value.__name__ not in ("ember", "ember.nn.functional"):
                    found.setdefault(value.__name__, value)
        return list(found.values())

    def _wrapper(self, fn):
        if not callable(fn) or getattr(fn, "__fx_original__", None) is not None:
            return fn
        tracer = self.tracer

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not tracer.executing and _has_proxy((args, kwargs)):
                return tracer.create_proxy("call_function", fn, args, kwargs)
            return fn(*args, **kwargs)
        wrapper.__fx_original__ = fn
        return wrapper


def _example_of(x):
    return x.node.meta["example_value"] if isinstance(x, Proxy) else x


def _fetch_attr(root, target, constants):
    if target in constants:
        return constants[target]
    obj = root
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _is_ember_function(value):
    """A public function of ember or of a plugin (not of the zoo: models are traced through)."""
    module = getattr(value, "__module__", None) or ""
    return (inspect.isfunction(value) and module.startswith("ember") and not module.startswith("ember_zoo")
            and not module.startswith("ember.fx") and not value.__name__.startswith("_"))


def _has_proxy(value):
    found = []
    map_aggregate(value, lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return bool(found)


def symbolic_trace(root, concrete_args=None, *, example_inputs=None):
    """Trace ``root`` (a Module or a function) into a ``GraphModule``.

    Args:
        root: the module or function to trace.
        concrete_args: ``{argument name: value}`` baked into the graph instead of
            becoming an input, to take one side of a branch on that argument.
        example_inputs: ember's addition (PyTorch's symbolic_trace has none): a tuple of
            example inputs that answer shape queries and branches during the trace, so
            ``if x.shape[1] > n`` no longer stops it; the graph is then specialised to
            those shapes (NOTE [ Tracing with example inputs ]).

    >>> import ember
    >>> gm = ember.fx.symbolic_trace(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()))
    >>> print(gm.code.strip())
    def forward(self, input):
        input_1 = input
        _0 = getattr(self, '0')(input_1); input_1 = None
        _1 = getattr(self, '1')(_0); _0 = None
        return _1
    """
    from ember.fx.graph_module import GraphModule, attribute_source
    from ember.nn import Module

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args, example_inputs)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(attribute_source(tracer.root, graph, tracer.tensor_constants), graph, name)


__all__ = ["Tracer", "symbolic_trace", "wrap", "Node"]
