"""Run a captured op graph straight against the backend's arrays: one generated Python
function of kernel calls, no tensors, no dispatch, no autograd record.

PyTorch counterpart: the idea of torch/_inductor/codegen/wrapper.py (the generated
"wrapper" that calls one kernel after another) (v2.13); ember's kernels are its own
backend kernels, called with arrays.

See NOTE [ The compiled program ].
"""

import operator

from ember.fx.node import map_aggregate, map_arg

# NOTE [ The compiled program ]
# `Program` plans once, on example inputs: it runs the graph eagerly (the plan run),
# notes every value's array (shape, dtype, whether it shares memory with an input,
# whether it is writable), and then writes one Python function whose locals are the
# arrays: `v3 = k_convolution(x, c_w, c_b, stride=(1, 1), ...)`. Weights are globals of
# that function (frozen at compile time, as TensorRT and torch's freezing do). Where
# the dispatcher would promote dtypes, the plan run saw the promoted dtype and the code
# casts explicitly. A fused elementwise chain (passes/fusion.py) writes into the array
# of its first operand when nothing else can see that array (a fresh kernel output with
# one user), or else into a buffer allocated once and reused by every call; a returned
# value that lives in such a buffer is copied on the way out, so callers never share it.


class Program:
    """The compiled form of an op-level graph for one input signature."""

    def __init__(self, graph, attributes, example_inputs, device):
        from ember.compiler.passes.fusion import FusedElementwise

        self.device = device
        self.xp = device.backend.xp
        self.globals = {"xp": self.xp, "getitem": operator.getitem}
        self.buffers = {}
        values = _plan_run(graph, attributes, example_inputs)
        names = {}
        lines = []
        params = []
        for node in graph.nodes:
            name = names[node] = _local(node.name)
            if node.op == "placeholder":
                params.append(name)
            elif node.op == "get_attr":
                self.globals[name] = _array(attributes[node.target])
                names[node] = name
            elif node.op == "call_function" and isinstance(node.target, FusedElementwise):
                lines.append(self._fused_line(node, name, names, values))
            elif node.op == "call_function" and hasattr(node.target, "array_kernel"):
                kernel = self._global(node.target.__name__, node.target.array_kernel(self.xp))
                lines.append(f"{name} = {kernel}({', '.join(self._arg(a, names) for a in node.args)})")
            elif node.op == "call_function" and node.target is operator.getitem:
                lines.append(f"{name} = {names[node.args[0]]}[{node.args[1]!r}]")
            elif node.op == "call_function":
                lines.append(self._op_line(node, name, names, values))
            elif node.op == "output":
                lines.append(self._return_line(node, names, values))
            else:
                raise NotImplementedError(f"ember.compile: cannot run a {node.op} node ({node.name})")
        self.source = f"def run({', '.join(params)}):\n" + "\n".join("    " + line for line in lines) + "\n"
        exec(compile(self.source, "<ember.compile program>", "exec"), self.globals)
        self.run = self.globals["run"]

    # --- one line per node ---------------------------------------------------------------
    def _op_line(self, node, name, names, values):
        op = node.target
        entry = op._resolved.get(self.device.type) or op._resolve(self.device)
        kernel = entry[1]  # the kernel with its namespace bound
        kernel_name = self._global("k_" + op.name.replace(".", "_"), kernel)
        target = _promotion_target(node, values)
        args = []
        for a in node.args:
            text = self._arg(a, names)
            if target is not None and hasattr(values.get(a), "dtype") and values[a].dtype != target:
                text = f"{text}.astype({self._global('dtype', target)})"
            args.append(text)
        args += [f"{k}={self._arg(v, names)}" for k, v in node.kwargs.items()]
        call = f"{kernel_name}({', '.join(args)})"
        result = values[node]
        if op.num_outputs == 1 and not isinstance(result, self._array_type()):
            call = f"xp.asarray({call})"  # a kernel may return a scalar; dispatch wraps it too
        return f"{name} = {call}"

    def _fused_line(self, node, name, names, values):
        fused = node.target
        fn = self._global("fused", fused.function(self.xp))
        args = ", ".join(self._arg(a, names) for a in node.args)
        destination = fused.inplace_operand(node, values)
        if destination is not None:
            out = names[node.args[destination]]
        else:
            result = values[node]
            out = self._global("buffer", self.xp.empty_like(result))  # keeps its layout (pixel-major too)
            self.buffers[node] = out
        return f"{name} = {fn}({args}, out={out})"

    def _return_line(self, node, names, values):
        in_buffer = {n for n in values if n in self.buffers}
        roots = _alias_roots(node.graph, values)

        def fetch(n):
            text = names[n]
            if roots.get(n) in in_buffer:
                text += ".copy()"  # the buffer is reused by the next call
            return text
        wrapped = map_arg(node.args[0], lambda n: f"WRAP({fetch(n)})")
        self.globals["WRAP"] = self._wrap
        return "return " + _source(wrapped)

    # --- helpers ---------------------------------------------------------------------------
    def _wrap(self, array):
        from ember.dispatcher import _wrap

        return _wrap(array, self.device)

    def _array_type(self):
        return self.device.backend.array_type

    def _global(self, base, value):
        name, i = base, 0
        while name in self.globals and self.globals[name] is not value:
            i += 1
            name = f"{base}_{i}"
        self.globals[name] = value
        return name

    def _arg(self, value, names):
        from ember.fx import Node

        if isinstance(value, Node):
            return names[value]
        if isinstance(value, (tuple, list)):
            inner = ", ".join(self._arg(v, names) for v in value)
            if isinstance(value, list):
                return f"[{inner}]"
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if value is None or isinstance(value, (bool, int, str)) or value is Ellipsis:
            return repr(value)
        if isinstance(value, float) and value == value and abs(value) != float("inf"):
            return repr(value)
        return self._global("c", value)


def _source(value):
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        inner = ", ".join(_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_source(v) for v in value) + "]"
    return repr(value)


def _local(name):
    return "v_" + name  # never clashes with the globals (xp, k_*, c_*, fused*)


def _array(value):
    from ember.tensor import Tensor

    return value._data if isinstance(value, Tensor) else value


def _plan_run(graph, attributes, example_inputs):
    """Every node's value (arrays, or tuples of arrays) on the example inputs, computed by
    ember's eager ops on tensors; returned as arrays."""
    from ember.autograd.grad_mode import no_grad
    from ember.tensor import Tensor

    env = {}
    inputs = iter(example_inputs)
    with no_grad():
        for node in graph.nodes:
            if node.op == "placeholder":
                env[node] = next(inputs)
            elif node.op == "get_attr":
                env[node] = attributes[node.target]
            elif node.op == "call_function":
                args, kwargs = map_arg((node.args, node.kwargs), env.__getitem__)
                env[node] = node.target(*args, **kwargs)
    return {n: map_aggregate(v, lambda t: t._data if isinstance(t, Tensor) else t) for n, v in env.items()}


def _promotion_target(node, values):
    """The dtype an op computes in when the dispatcher would cast its tensor inputs."""
    from ember.dispatcher import NONE

    op = node.target
    if op.promote is NONE:
        return None
    dtypes = {values[a].dtype for a in node.all_input_nodes if hasattr(values.get(a), "dtype")}
    if len(dtypes) <= 1:
        return None
    result = values[node]
    return result.dtype if op.promote != "compare" else None


def _alias_roots(graph, values):
    """For each value, the value whose memory it lives in (itself unless it shares
    memory with an input, as a view does)."""
    roots = {}
    for node in graph.nodes:
        roots[node] = node
        mine = _arrays(values.get(node))
        for source in node.all_input_nodes:
            if any(_shares(a, b) for a in mine for b in _arrays(values.get(source))):
                roots[node] = roots[source]
                break
    return roots


def _arrays(value):
    found = []
    map_aggregate(value, lambda v: found.append(v) if hasattr(v, "shape") and hasattr(v, "dtype") else None)
    return found


def _shares(a, b):
    import numpy as np

    try:
        return bool(np.may_share_memory(a, b))
    except TypeError:  # cupy arrays: compare the base pointers' ranges
        return a.data.ptr == b.data.ptr
