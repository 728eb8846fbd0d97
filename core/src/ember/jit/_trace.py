"""``ember.jit.trace``: run a function or module once and record the operators the
dispatcher executes, as an op-level ``ember.fx.Graph``.

PyTorch counterpart: torch/jit/_trace.py (``torch.jit.trace``) and the idea of
torch/fx/experimental/proxy_tensor.py (``make_fx``: a graph of aten ops) (v2.13).
ember records into the fx ``Graph`` (one graph representation, not two): every node is
a ``call_function`` of an ember op (``ember.ops.aten.convolution``), and the result is
a ``GraphModule`` whose generated code reads like ``make_fx``'s.

See NOTE [ Tracing at the dispatcher ].
"""

import operator

from ember.dispatch_modes import modes
from ember.fx import Graph, GraphModule
from ember.fx.node import map_aggregate

# NOTE [ Tracing at the dispatcher ]
# Every op ember runs passes through `dispatch` (ember/dispatcher.py). While a trace is
# active, it is a mode of the dispatcher (NOTE [ Modes at the dispatcher ]): each op
# runs through `run_in_modes`, which hands (op, inputs, attrs, outputs) to
# `_OpRecorder.record`, which
# appends a node whose arguments are the nodes that produced the input tensors (found by
# the tensor's identity), `get_attr` nodes for the module's parameters and buffers, or
# constants for tensors made outside any op (`ember.arange(n)` inside forward). Python
# control flow and shapes are fixed by the example, as in torch.jit.trace.
#
# In-place ops are an out-of-place op plus a write (NOTE [ In-place ops are out-of-place
# ops plus a write ]); the write calls `rebind`, so later readers of the target read the
# new node. A tensor whose version counter moved without such a rebind (a write through
# a view into its base) cannot be replayed from the graph: reading it is an error.
# When no mode is on, ops pay nothing for the modes.


class TracingError(RuntimeError):
    """A program that ``ember.jit.trace`` cannot record faithfully."""


def _version(t):
    v = t._version
    return v[0] if isinstance(v, list) else v


class _OpRecorder:
    def __init__(self, module):
        self.graph = Graph()
        self.values = {}  # id(tensor) -> (node, version)
        self.keep = []  # the traced tensors stay alive, so their ids stay unique
        self.constants = {}
        self.attributes = {}  # get_attr path -> tensor
        self.paths = {}
        if module is not None:
            for name, t in list(module.named_buffers(remove_duplicate=False)) + \
                    list(module.named_parameters(remove_duplicate=False)):
                self.paths.setdefault(id(t), name)

    def placeholder(self, name, tensor):
        node = self.graph.placeholder(name)
        self._bind(tensor, node)
        return node

    def _bind(self, tensor, node):
        self.values[id(tensor)] = (node, _version(tensor))
        self.keep.append(tensor)

    def value(self, x):
        """Graph data for an argument: a node for a tensor, the value itself otherwise."""
        from ember.tensor import Tensor

        if not isinstance(x, Tensor):
            return x
        found = self.values.get(id(x))
        if found is not None:
            node, version = found
            if version != _version(x):
                raise TracingError(f"ember.jit.trace: a tensor read by '{node.name}''s users was modified in place "
                                   "through a view or outside the dispatcher; the graph cannot replay that write. "
                                   "Write into the tensor itself, or clone() before the in-place op.")
            return node
        path = self.paths.get(id(x))
        if path is None:
            path = f"_tensor_constant{len(self.constants)}"
            self.constants[path] = x
        node = self.graph.get_attr(path)
        self.attributes[path] = x
        self._bind(x, node)
        return node

    def record(self, op, inputs, attrs, outputs):
        args = tuple(self.value(x) for x in inputs)
        kwargs = map_aggregate(attrs, self.value) if attrs else {}
        node = self.graph.call_function(op, args, kwargs)
        if op.num_outputs == 1:
            self._bind(outputs[0], node)
            return
        for i, out in enumerate(outputs):
            self._bind(out, self.graph.call_function(operator.getitem, (node, i)))

    def rebind(self, target, result):
        """``target`` now holds ``result``'s value (an in-place op's write)."""
        found = self.values.get(id(result))
        if found is not None:
            self._bind(target, found[0])


def trace(func, example_inputs, check_trace=True):
    """Run ``func`` (a Module or function) on ``example_inputs`` and return a ``GraphModule``
    running the ops it ran.

    Args:
        func: a ``Module`` or a function of tensors.
        example_inputs: a tensor or a tuple of tensors.
        check_trace: run the traced module on the examples and compare it with ``func``'s
            result (torch.jit.trace's check); a mismatch raises ``TracingError``.

    >>> import ember
    >>> traced = ember.jit.trace(lambda x: (x * 2).relu(), ember.ones(3))
    >>> print(traced.code.strip())
    def forward(self, x):
        mul = ember.ops.aten.mul(x, 2); x = None
        relu = ember.ops.aten.relu(mul); mul = None
        return relu
    """
    from ember.nn import Module
    from ember.tensor import Tensor

    inputs = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(example_inputs)
    module = func if isinstance(func, Module) else None
    recorder = _OpRecorder(module)
    names = _input_names(func, len(inputs))
    for name, x in zip(names, inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"ember.jit.trace: example inputs must be tensors, got {type(x).__name__} for {name!r}")
        recorder.placeholder(name, x)
    if modes.trace is not None:
        raise TracingError("ember.jit.trace is already running: traces do not nest")
    modes.set_trace(recorder)
    try:
        result = func(*inputs)
    finally:
        modes.set_trace(None)
    map_aggregate(result, _refuse_quantized)
    recorder.graph.output(map_aggregate(result, recorder.value))
    recorder.graph.eliminate_dead_code()
    name = type(func).__name__ if module is not None else getattr(func, "__name__", "traced")
    traced = GraphModule(_attribute_dict(recorder), recorder.graph, _class_name(name))
    if module is not None:
        traced.training = module.training
    if check_trace:
        _check(traced, inputs, result)
    return traced


def _refuse_quantized(value):
    # A quantized tensor (ember-quantization's QTensor) is integers plus qparams outside any
    # op: recorded as is it would be a constant of the graph, whatever the input.
    if getattr(value, "is_quantized", False) is True:
        raise TracingError("ember.jit.trace: the function returns a quantized tensor, which a traced graph cannot "
                           "return (its qparams are not a tensor); end the model with a DeQuantStub (dequantize())")
    return value


def _attribute_dict(recorder):
    used = {n.target for n in recorder.graph.nodes if n.op == "get_attr"}
    return {path: t for path, t in recorder.attributes.items() if path in used}


def _class_name(name):
    import keyword

    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_") or "traced"
    if not cleaned[0].isalpha() or keyword.iskeyword(cleaned) or cleaned == "self":
        cleaned = "traced_" + cleaned  # a lambda's name, <lambda>, would be the keyword lambda
    return cleaned


def _input_names(func, count):
    import inspect

    from ember.nn import Module

    fn = type(func).forward if isinstance(func, Module) else func
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    if isinstance(func, Module):
        parameters = parameters[1:]
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:count]
    names += [f"input_{i}" for i in range(len(names), count)]
    return names


def _check(traced, inputs, expected):
    import numpy as np

    from ember.autograd.grad_mode import no_grad
    from ember.tensor import Tensor

    with no_grad():
        got = traced(*inputs)
    pairs = []
    map_aggregate(expected, lambda e: pairs.append(e))
    got_flat = []
    map_aggregate(got, lambda g: got_flat.append(g))
    for e, g in zip(pairs, got_flat):
        if isinstance(e, Tensor) and not np.allclose(_host_values(g), _host_values(e), rtol=1e-5, atol=1e-6,
                                                     equal_nan=True):
            raise TracingError("ember.jit.trace: the traced graph does not reproduce the original's output on the "
                               "example inputs (the function may depend on values or state the trace cannot record)")


def _host_values(t):
    """A NumPy array of ``t``'s values; floating tensors through float64, as bfloat16 has
    no ``.numpy()``."""
    t = t.detach().cpu()
    return t.double().numpy() if t.is_floating_point() else t.numpy()
