"""Constant folding: compute once, at compile time, every op whose inputs are all
constants (weights, buffers, tensors made in forward), and read the result instead.

PyTorch counterpart: torch/_inductor/constant_folding.py (v2.13). ``rsqrt(running_var +
eps)`` of a batch norm in eval mode, or a weight's transpose, is computed once instead
of on every call.
"""

from ember.fx.node import map_arg


def fold_constants(graph, attributes):
    """Rewrite ``graph`` in place; ``attributes`` (get_attr path -> tensor) gains the folded
    values. Returns how many nodes were folded."""
    from ember.autograd.grad_mode import no_grad

    constant = {n: attributes[n.target] for n in graph.nodes if n.op == "get_attr"}
    folded = 0
    for node in graph.nodes:
        if node.op != "call_function" or not node.all_input_nodes:
            continue
        if not all(n in constant for n in node.all_input_nodes):
            continue
        with no_grad():
            value = node.target(*map_arg(node.args, constant.__getitem__),
                                **map_arg(node.kwargs, constant.__getitem__))
        constant[node] = value
        if not _is_tensor(value):
            continue  # a tuple of a multi-output op: its getitem users fold next
        path = f"_folded_{node.name}"
        attributes[path] = value
        with graph.inserting_before(node):
            replacement = graph.get_attr(path)
        node.replace_all_uses_with(replacement)
        constant[replacement] = value
        folded += 1
    graph.eliminate_dead_code()
    return folded


def _is_tensor(value):
    from ember.tensor import Tensor

    return isinstance(value, Tensor)
