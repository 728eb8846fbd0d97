"""``ember.onnx.export``: a traced op graph written as an ONNX model with the ``onnx``
package, checked by ``onnx.checker`` (full check) before it is saved.

PyTorch counterpart: torch/onnx/utils.py (``export``: trace, run passes, convert each
node with its symbolic function, ``dynamic_axes``) (v2.13). ember's graph is the one
``ember.jit.trace`` records; see NOTE [ Dynamic axes from two traces ].
"""

import numpy as np

from ember.fx.node import map_aggregate

# NOTE [ Dynamic axes from two traces ]
# A trace bakes sizes into the graph: `view(x, (2, 4, 5, 16))` holds the batch size 2.
# To export a dynamic axis, ember traces once more with that axis one longer and
# compares the two graphs node by node. An integer argument that changed is taken to
# be linear in the axis's size, `a * size + c` (batch * heads is such an integer), and
# is computed in the ONNX graph from `Shape(input)`; PyTorch's exporter gets the same
# from its symbolic shapes. A graph whose structure, tensor constants or other
# integers change with the size cannot be exported with that axis dynamic: the error
# says which node.

DEFAULT_OPSET = 17


class OnnxExporterError(RuntimeError):
    """The model cannot be written as ONNX (an op without a conversion, a dynamic axis
    the graph cannot follow)."""


def export(model, args, f, *, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=DEFAULT_OPSET, do_constant_folding=True, verbose=False):
    """Write ``model`` run on ``args`` to ``f`` (a path or a binary file) as an ONNX model.

    Args:
        model: an ``ember.nn.Module`` (exported in eval mode) or a function of tensors.
        args: a tensor or a tuple of tensors, the example inputs.
        input_names, output_names: names of the graph's inputs and (flattened) outputs.
        dynamic_axes: ``{name: {axis: "dim_name"}}`` or ``{name: [axis, ...]}``: axes of
            inputs (and outputs) whose size may change, e.g. ``{"x": {0: "batch"}}``.
        opset_version: the ONNX opset (14 to 19 supported; 19 adds DeformConv).
        do_constant_folding: fold weight-only computations into initializers.
        verbose: print the exported graph.

    Returns:
        The ``onnx.ModelProto`` written.
    """
    onnx = _import_onnx()
    if not 14 <= opset_version <= 19:
        raise ValueError(f"ember.onnx.export supports opset versions 14 to 19, got {opset_version}")
    from ember.tensor import Tensor

    args = (args,) if isinstance(args, Tensor) else tuple(args)
    graph, attributes, values = _capture(model, args, do_constant_folding)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    input_names = list(input_names or [n.target for n in placeholders])
    if len(input_names) != len(placeholders):
        raise ValueError(f"input_names has {len(input_names)} names for {len(placeholders)} inputs")
    dynamic = _normalise_dynamic_axes(dynamic_axes or {}, input_names)
    symbols, output_dims = _dynamic_integers(model, args, graph, attributes, values, dynamic, input_names,
                                             do_constant_folding)
    from ember.onnx.graph_context import GraphContext

    context = GraphContext(onnx, graph, attributes, values, opset_version, symbols, input_names)
    outputs = context.convert()
    output_names = list(output_names or [f"output_{i}" for i in range(len(outputs))])
    if len(output_names) != len(outputs):
        raise ValueError(f"output_names has {len(output_names)} names for {len(outputs)} outputs")
    model_proto = context.model(input_names, output_names, outputs, dynamic, output_dims)
    onnx.checker.check_model(model_proto, full_check=True)
    if verbose:
        print(onnx.helper.printable_graph(model_proto.graph))
    onnx.save(model_proto, f)
    return model_proto


def _import_onnx():
    try:
        import onnx
    except ImportError:
        from ember.plugins.manager import install_hint

        raise ImportError("ember.onnx.export needs the onnx package (and onnxruntime, to run what it writes): "
                          f"{install_hint('ember-core', extra='onnx')}") from None
    return onnx


def _capture(model, args, fold):
    """The traced graph (eval mode, no grad), its tensors and every node's example array."""
    from ember.autograd.grad_mode import no_grad
    from ember.compiler.capture import capture
    from ember.compiler.executor import _plan_run
    from ember.compiler.passes import eliminate_dead_code, fold_constants
    from ember.nn import Module

    was_training = isinstance(model, Module) and model.training
    if was_training:
        model.eval()
    try:
        with no_grad():
            module = model if isinstance(model, Module) else _FunctionModule(model)
            graph, attributes = capture(module, args)
            eliminate_dead_code(graph)
            if fold:
                fold_constants(graph, attributes)
            values = _plan_run(graph, attributes, args)
    finally:
        if was_training:
            model.train()
    return graph, attributes, values


class _FunctionModule:
    """Lets a plain function go through capture (jit.trace takes functions too)."""

    def __new__(cls, fn):
        from ember.nn import Module

        class Wrapped(Module):
            def forward(self, *inputs):
                return fn(*inputs)
        return Wrapped()


def _normalise_dynamic_axes(dynamic_axes, input_names):
    dynamic = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, dict):
            dynamic[name] = {int(a): str(n) for a, n in axes.items()}
        else:
            dynamic[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    return dynamic


def _dynamic_integers(model, args, graph, attributes, values, dynamic, input_names, fold):
    """NOTE [ Dynamic axes from two traces ]: ``(symbols, output_dims)``. ``symbols`` maps
    (node name, argument path) to ``(c, {(input, axis): a})``; ``output_dims`` maps output
    position to ``{axis: dim name}``."""
    import ember

    symbols = {}
    output_dims = {}
    base_nodes = graph.nodes
    groups = {}  # dim name -> [(input position, axis)]: axes of one name grow together
    for name, axes in dynamic.items():
        if name in input_names:
            for axis, dim_name in axes.items():
                groups.setdefault(dim_name, []).append((input_names.index(name), axis))
    for dim_name, members in groups.items():
        grown = list(args)
        for position, axis in members:
            x = grown[position]
            grown[position] = ember.cat([x, x.narrow(axis, 0, 1)], dim=axis)
        other, other_attributes, other_values = _capture(model, tuple(grown), fold)
        position, axis = members[0]  # the ONNX graph reads this size from Shape(input)
        _compare(base_nodes, other.nodes, attributes, other_attributes, (position, axis), symbols,
                 args[position].shape[axis])
        out_base = _flat_outputs(base_nodes[-1], values)
        out_grown = _flat_outputs(other.nodes[-1], other_values)
        for i, (a, b) in enumerate(zip(out_base, out_grown)):
            for d, (s1, s2) in enumerate(zip(a.shape, b.shape)):
                if s1 != s2:
                    output_dims.setdefault(i, {})[d] = dim_name
    return symbols, output_dims


def _flat_outputs(output_node, values):
    found = []
    map_aggregate(output_node.args[0], lambda n: found.append(values[n]) if hasattr(n, "op") else None)
    return found


def _compare(nodes, other_nodes, attributes, other_attributes, key, symbols, size):
    if len(nodes) != len(other_nodes):
        raise OnnxExporterError(f"the traced graph changes with the size of dynamic axis {key[1]} of input "
                                f"{key[0]}: it cannot be exported with that axis dynamic")
    for a, b in zip(nodes, other_nodes):
        if a.op != b.op or a.target != b.target and a.op != "get_attr":
            raise OnnxExporterError(f"the traced graph changes with the size of dynamic axis {key[1]} "
                                    f"(at node {a.name}): it cannot be exported with that axis dynamic")
        if a.op == "get_attr" and tuple(attributes[a.target].shape) != tuple(other_attributes[b.target].shape):
            raise OnnxExporterError(f"the constant tensor {a.target} (node {a.name}) changes shape with dynamic axis "
                                    f"{key[1]}: it was made in forward from the input's size")
        for path, (u, v) in _int_pairs((a.args, a.kwargs), (b.args, b.kwargs)):
            if u != v:
                c, coefficients = symbols.get((a.name, path), (u, {}))
                coefficients = dict(coefficients)
                coefficients[key] = v - u
                symbols[(a.name, path)] = (c - (v - u) * size, coefficients)


def _int_pairs(a, b, path=()):
    if isinstance(a, bool) or isinstance(b, bool):
        return
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        yield path, (int(a), int(b))
    elif isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _int_pairs(x, y, path + (i,))
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k in b:
                yield from _int_pairs(a[k], b[k], path + (k,))
