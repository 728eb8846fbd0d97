"""``GraphContext``: what a symbolic function (ember/onnx/symbolic_opset.py) writes ONNX
nodes into: value names, constants (initializers), casts, and shapes that follow a
dynamic axis.

PyTorch counterpart: torch/onnx/_internal/torchscript_exporter/jit_utils.py (``GraphContext``,
``g.op``) (v2.13).
"""

import operator

import numpy as np

from ember.fx.node import map_aggregate


class GraphContext:
    def __init__(self, onnx, graph, attributes, values, opset_version, symbols, input_names):
        self.onnx = onnx
        self.graph = graph
        self.attributes = attributes
        self.values = values
        self.opset_version = opset_version
        self.symbols = symbols
        self.input_names = input_names
        self.nodes = []
        self.initializers = {}
        self.names = {}
        self._counter = 0
        self._constants = {}
        self._used_symbols = set()
        self._current = None

    # --- the conversion ---------------------------------------------------------------------
    def convert(self):
        """Convert every node; returns the ONNX names of the (flattened) outputs."""
        from ember.onnx import symbolic_quantized  # noqa: F401  (fills SYMBOLICS with the quantized ops)
        from ember.onnx.registration import custom_symbolic
        from ember.onnx.symbolic_opset import SYMBOLICS

        placeholders = iter(self.input_names)
        for node in self.graph.nodes:
            self._current = node
            if node.op == "placeholder":
                self.names[node] = next(placeholders)
            elif node.op == "get_attr":
                self.names[node] = _LAZY  # an initializer only if a node reads it (batch norms fold theirs)
            elif node.op == "call_function" and node.target is operator.getitem:
                self.names[node] = self.names[node.args[0]][node.args[1]]
            elif node.op == "call_function":
                qualname = getattr(node.target, "qualname", None)
                convert = custom_symbolic(qualname, self.opset_version) or SYMBOLICS.get(qualname)
                if convert is None:
                    raise self.unsupported(node, _no_conversion(qualname or node.target, self.opset_version))
                self.names[node] = convert(self, node)
                leftover = {path for (name, path) in self.symbols if name == node.name} - self._used_symbols
                if leftover:
                    raise self.unsupported(node, f"an argument of {qualname} that depends on a dynamic axis")
            elif node.op == "output":
                found = []
                map_aggregate(node.args[0], lambda n: found.append(self.value(n)) if hasattr(n, "op") else None)
                return found
        raise RuntimeError("graph without an output node")

    def model(self, input_names, output_names, outputs, dynamic, output_dims):
        helper = self.onnx.helper
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        inputs = [self._value_info(name, self.values[n], dynamic.get(name, {}))
                  for name, n in zip(input_names, placeholders)]
        nodes = list(self.nodes)
        output_infos = []
        output_arrays = _flat(self.graph.nodes[-1].args[0], self.values)
        for i, (name, source, array) in enumerate(zip(output_names, outputs, output_arrays)):
            nodes.append(helper.make_node("Identity", [source], [name], name=f"output_{i}_identity"))
            output_infos.append(self._value_info(name, array, {**output_dims.get(i, {}), **dynamic.get(name, {})}))
        initializers = [self.onnx.numpy_helper.from_array(a, name) for name, a in self.initializers.items()]
        graph = helper.make_graph(nodes, "ember_graph", inputs, output_infos, initializer=initializers)
        model = helper.make_model(graph, producer_name="ember", opset_imports=[helper.make_opsetid("",
                                                                                                    self.opset_version)])
        model.ir_version = min(model.ir_version, 9)  # what onnxruntime releases read
        return model

    # --- what symbolic functions call -------------------------------------------------------
    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Add an ONNX node; returns its output name (a list of names for ``outputs > 1``)."""
        self._counter += 1
        base = f"{self._current.name}_{op_type}_{self._counter}" if self._current is not None else op_type
        names = [base] if outputs == 1 else [f"{base}_{i}" for i in range(outputs)]
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), names, name=base, **attrs))
        return names[0] if outputs == 1 else names

    def value(self, arg, like=None):
        """The ONNX name for an argument: a node's value (cast to ``like``'s dtype when the
        dispatcher would have promoted it), a scalar as a constant, or "" for None."""
        if arg is None:
            return ""
        target = None if like is None else getattr(self.values.get(like), "dtype", None)
        if hasattr(arg, "op"):
            name = self.names[arg]
            if name is _LAZY:
                name = self.names[arg] = self._initializer(arg.target, self._array_of(arg))
            if name is None:
                raise self.unsupported(self._current, f"a second output of {arg.name} that ONNX does not give")
            mine = getattr(self.values.get(arg), "dtype", None)
            if target is not None and mine is not None and mine != target and target != np.bool_:
                name = self.op("Cast", name, to=self.onnx.helper.np_dtype_to_tensor_dtype(target))
            return name
        dtype = target if target is not None and target != np.bool_ else _scalar_dtype(arg)
        return self.const(np.asarray(arg, dtype=dtype))

    def scalar(self, value, like):
        return self.const(np.asarray(value, dtype=self.values[like].dtype))

    def const(self, array):
        array = np.ascontiguousarray(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            self._constants[key] = self._initializer(f"const_{len(self._constants)}", array)
        return self._constants[key]

    def meta(self, node):
        return self.values[node]

    def is_constant(self, node):
        return node is not None and node.op == "get_attr"

    def array(self, node):
        return self._array_of(node)

    def transposed_constant(self, node):
        return self.const(self._array_of(node).T)

    def reduce(self, op_type, x, axes, keepdims):
        if self.opset_version >= 18:
            return self.op(op_type, x, self.const(np.array(axes, np.int64)), keepdims=int(keepdims))
        if op_type == "ReduceSum":  # ReduceSum took axes as an input from opset 13
            return self.op(op_type, x, self.const(np.array(axes, np.int64)), keepdims=int(keepdims))
        return self.op(op_type, x, axes=list(axes), keepdims=int(keepdims))

    def int_list(self, node, name):
        """A 1-D int64 tensor for ``node.kwargs[name]`` (a shape), computed from the inputs'
        shapes where entries follow a dynamic axis (NOTE [ Dynamic axes from two traces ])."""
        entries = list(node.kwargs[name])
        paths = [(1, name, i) for i in range(len(entries))]
        if not any((node.name, p) in self.symbols for p in paths):
            return self.const(np.array(entries, np.int64))
        pieces = []
        for value, path in zip(entries, paths):
            symbol = self.symbols.get((node.name, path))
            if symbol is None:
                pieces.append(self.const(np.array([value], np.int64)))
                continue
            self._used_symbols.add(path)
            c, coefficients = symbol
            total = self.const(np.array([c], np.int64))
            for (position, axis), a in coefficients.items():
                size = self.op("Shape", self.input_names[position], start=axis, end=axis + 1)
                total = self.op("Add", total, self.op("Mul", size, self.const(np.array([a], np.int64))))
            pieces.append(total)
        return self.op("Concat", *pieces, axis=0)

    def unsupported(self, node, what):
        from ember.onnx.utils import OnnxExporterError

        return OnnxExporterError(f"ember.onnx.export cannot export node {node.name}: {what}")

    # --- helpers ------------------------------------------------------------------------------
    def _array_of(self, node):
        value = self.attributes[node.target]
        return np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value)

    def _initializer(self, name, array):
        self.initializers[name] = np.asarray(array)
        return name

    def _value_info(self, name, array, dims):
        shape = [dims.get(i, size) for i, size in enumerate(array.shape)]
        element = self.onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        return self.onnx.helper.make_tensor_value_info(name, element, shape)


_LAZY = object()


def _no_conversion(op, opset_version):
    """Why an op cannot be written: no conversion, or one only for a later opset."""
    from ember.onnx.registration import first_opset

    first = first_opset(op) if isinstance(op, str) else None
    if first is not None:
        return f"the op {op!r}, whose ONNX conversion needs opset {first} or later (exporting at {opset_version})"
    return f"the op {op!r}, which has no ONNX conversion"


def _scalar_dtype(value):
    if isinstance(value, (bool, np.bool_)):
        return np.bool_
    if isinstance(value, (int, np.integer)):
        return np.int64
    return np.float32


def _flat(value, values):
    found = []
    map_aggregate(value, lambda n: found.append(values[n]) if hasattr(n, "op") else None)
    return found
