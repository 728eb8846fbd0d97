"""``graph_to_dot``: the autograd graph behind a tensor, as Graphviz DOT text.

PyTorch counterpart: none in PyTorch itself. The usual tool there is torchviz's
``make_dot`` (a separate package), which walks ``grad_fn.next_functions`` the same
way. ember ships this small exporter so that its docs draw graphs from real ember
graphs rather than from hand-made pictures.

The drawing follows the gradient: an arrow goes from a node to each entry of its
``next_functions``. Each node is numbered by the step at which ``backward()`` runs it,
found by replaying the engine's own ordering (``execution_order``). The inputs are
drawn too: below each ``AccumulateGrad`` the leaf whose ``.grad`` it fills, and at the
end of each ``(None, 0)`` edge the input that needs no gradient (named when the node
saved it, else just ``None``). Unlike torchviz, which leaves ``None`` edges out.
"""

import heapq

from ember.autograd.graph import AccumulateGrad, OpNode


def graph_to_dot(tensor, params=None, graph_name="autograd"):
    """The autograd graph that ``tensor.backward()`` would walk, as DOT text.

    Args:
        tensor: an ember tensor with a ``grad_fn`` (or a leaf that requires grad).
        params: optional ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``)
            used to label the inputs; other inputs are labelled by their shape.
        graph_name: the name of the DOT digraph.

    Returns:
        A ``str`` holding one ``digraph``: the output tensor, every node reachable
        through ``next_functions``, labelled ``step. name`` in the order backward runs
        them, an arrow per edge (labelled with the ``output_nr`` when the target node
        has several outputs), each leaf below its ``AccumulateGrad``, and each
        ``(None, 0)`` edge ending at the input that needs no gradient.

    >>> import ember
    >>> from ember.autograd import graph_to_dot
    >>> w = ember.ones(2, requires_grad=True)
    >>> y = (w * 3).sum()
    >>> print(graph_to_dot(y, params={"w": w}))
    digraph autograd {
      node [shape=box, fontname="Helvetica", fontsize=11];
      edge [fontname="Helvetica", fontsize=10];
      t [label="tensor ()", shape=oval];
      t -> n1;
      n1 [label="1. SumBackward0"];
      n1 -> n2;
      n2 [label="2. MulBackward0"];
      n2 -> n3;
      none2_1 [label="scalar 3", shape=oval, style=dashed, color=gray50, fontcolor=gray30];
      n2 -> none2_1 [label="(None, 0)", style=dashed, color=gray50, fontcolor=gray30];
      n3 [label="3. AccumulateGrad", style=filled, fillcolor=lightblue];
      leaf3 [label="w (2,)\\nrequires_grad", shape=oval, style=filled, fillcolor=lightblue];
      n3 -> leaf3 [label=".grad", style=dotted];
    }
    """
    from ember.tensor import Tensor

    if not isinstance(tensor, Tensor):
        raise TypeError(f"graph_to_dot() expects an ember Tensor, got {type(tensor).__name__}")
    if tensor.grad_fn is not None:
        root = tensor.grad_fn
    elif tensor.requires_grad:
        root = tensor._get_grad_accumulator()
    else:
        raise ValueError("graph_to_dot(): the tensor has no autograd graph "
                         "(it does not require grad and has no grad_fn)")
    names = {id(t): name for name, t in (params or {}).items()}
    order = execution_order(root)
    ids = {node: f"n{step}" for step, node in enumerate(order, 1)}

    lines = [f"digraph {graph_name} {{",
             '  node [shape=box, fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=10];',
             f'  t [label="{_escape(_tensor_label(tensor, names, "tensor"))}", shape=oval];',
             "  t -> n1;"]
    for step, node in enumerate(order, 1):
        lines += _node_lines(node, step, names)
        for i, (child, output_nr) in enumerate(node.next_functions):
            if child is None:
                lines += _none_lines(node, step, i, output_nr, names)
                continue
            label = f' [label="{output_nr}"]' if child.num_outputs > 1 else ""
            lines.append(f"  {ids[node]} -> {ids[child]}{label};")
    lines.append("}")
    return "\n".join(lines)


def execution_order(root):
    """The nodes reachable from ``root`` in the order ``backward()`` runs them.

    A replay of ``engine.execute`` without running anything: the same count of edges
    into each node (``_dependencies``) and the same ready heap, keyed by ``-_seq`` (the
    most recently created node first, ``AccumulateGrad`` at once) and then by the order
    in which nodes became ready.
    """
    from ember.autograd.engine import _dependencies

    deps = _dependencies(root)
    ready = [(-root._seq, 0, root)]
    order = []
    tiebreak = 1
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] -= 1
            if deps[child] == 0:
                heapq.heappush(ready, (-child._seq, tiebreak, child))
                tiebreak += 1
    return order


def _node_lines(node, step, names):
    """The DOT statements for one node; an AccumulateGrad also draws its leaf."""
    label = f"{step}. {node.name()}"
    if not isinstance(node, AccumulateGrad):
        return [f'  n{step} [label="{_escape(label)}"];']
    leaf = _tensor_label(node.variable, names, "leaf") + "\\nrequires_grad"
    return [f'  n{step} [label="{_escape(label)}", style=filled, fillcolor=lightblue];',
            f'  leaf{step} [label="{_escape(leaf)}", shape=oval, style=filled, fillcolor=lightblue];',
            f'  n{step} -> leaf{step} [label=".grad", style=dotted];']


_GRAY = "color=gray50, fontcolor=gray30"


def _none_lines(node, step, i, output_nr, names):
    """A ``(None, output_nr)`` edge and the input behind it, when the node kept it."""
    label = _escape(_no_grad_input(node, i, names))
    target = f"none{step}_{i}"
    return [f'  {target} [label="{label}", shape=oval, style=dashed, {_GRAY}];',
            f'  n{step} -> {target} [label="(None, {output_nr})", style=dashed, {_GRAY}];']


def _no_grad_input(node, i, names):
    """What sits at the end of a None edge: the saved input (a tensor that needs no
    gradient, a Python number), or ``None`` when the node did not save its inputs.
    A ``CopySlices`` node's edges after the first are those of the in-place op it
    wraps (``fn``), so that op's saved inputs name them."""
    from ember.tensor import Tensor

    inner = getattr(node, "fn", None)  # CopySlices: edges 1.. are its in-place op's
    if i > 0 and isinstance(inner, OpNode) and len(inner.next_functions) == len(node.next_functions):
        node = inner
    saved = node._saved if isinstance(node, OpNode) else None
    if not isinstance(saved, tuple) or len(saved[0]) != len(node.next_functions):
        return "None"
    value = saved[0][i]
    if isinstance(value, Tensor):
        return _tensor_label(value, names, "tensor") + "\\nno grad"
    return f"scalar {value!r}"


def _tensor_label(tensor, names, default):
    return f"{names.get(id(tensor), default)} {tuple(tensor.shape)}"


def _escape(text):
    # Keep DOT's own escapes (\n) and protect the quotes of the label string.
    return text.replace('"', '\\"')
