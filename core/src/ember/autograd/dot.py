"""``graph_to_dot``: the autograd graph behind a tensor, as Graphviz DOT text.

PyTorch counterpart: none in PyTorch itself. The usual tool there is torchviz's
``make_dot`` (a separate package), which walks ``grad_fn.next_functions`` the same
way. ember ships this small exporter so that its docs draw graphs from real ember
graphs rather than from hand-made pictures.

The drawing follows the gradient: an arrow goes from a node to each entry of its
``next_functions``, so reading top-down is the order in which backward can run.
Nodes are numbered in the order a breadth-first walk meets them, so the same
program always gives the same text.
"""

from collections import deque

from ember.autograd.graph import AccumulateGrad


def graph_to_dot(tensor, params=None, graph_name="autograd"):
    """The autograd graph that ``tensor.backward()`` would walk, as DOT text.

    Args:
        tensor: an ember tensor with a ``grad_fn`` (or a leaf that requires grad).
        params: optional ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``)
            used to label the leaves; other leaves are labelled by their shape.
        graph_name: the name of the DOT digraph.

    Returns:
        A ``str`` holding one ``digraph``: the output tensor, every node reachable
        through ``next_functions`` and an arrow per edge (labelled with the
        ``output_nr`` when the target node has several outputs).

    >>> import ember
    >>> from ember.autograd import graph_to_dot
    >>> w = ember.ones(2, requires_grad=True)
    >>> y = (w * 3).sum()
    >>> print(graph_to_dot(y, params={"w": w}))
    digraph autograd {
      node [shape=box, fontname="Helvetica", fontsize=11];
      t [label="tensor ()", shape=oval];
      n0 [label="SumBackward0"];
      t -> n0;
      n1 [label="MulBackward0"];
      n0 -> n1;
      n2 [label="AccumulateGrad\\nw (2,)", style=filled, fillcolor=lightblue];
      n1 -> n2;
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

    lines = [f"digraph {graph_name} {{",
             '  node [shape=box, fontname="Helvetica", fontsize=11];',
             f'  t [label="tensor {_shape(tensor)}", shape=oval];']
    ids = {root: "n0"}
    lines += _node_lines(root, "n0", names)
    lines.append("  t -> n0;")
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for child, output_nr in node.next_functions:
            if child is None:
                continue
            if child not in ids:
                ids[child] = f"n{len(ids)}"
                lines += _node_lines(child, ids[child], names)
                queue.append(child)
            label = f' [label="{output_nr}"]' if child.num_outputs > 1 else ""
            lines.append(f"  {ids[node]} -> {ids[child]}{label};")
    lines.append("}")
    return "\n".join(lines)


def _node_lines(node, node_id, names):
    """The DOT statement for one node; a leaf's AccumulateGrad names its tensor."""
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        label = f"AccumulateGrad\\n{names.get(id(leaf), 'leaf')} {_shape(leaf)}"
        return [f'  {node_id} [label="{_escape(label)}", style=filled, fillcolor=lightblue];']
    return [f'  {node_id} [label="{_escape(node.name())}"];']


def _shape(tensor):
    return str(tuple(tensor.shape))


def _escape(text):
    # Keep DOT's own escapes (\n) and protect the quotes of the label string.
    return text.replace('"', '\\"')
