"""``replace_pattern``: find every occurrence of a traced pattern in a ``GraphModule`` and
put a traced replacement in its place.

PyTorch counterpart: torch/fx/subgraph_rewriter.py (v2.13). Like PyTorch, the pattern's
placeholders match any value, a matched pattern's inner values may not be used outside
it, and matches do not overlap. ember matches from the pattern's single output
backwards; patterns with several outputs are left out.
"""

from collections import namedtuple

from ember.fx.node import Node, map_arg

Match = namedtuple("Match", ["anchor", "nodes_map"])


def replace_pattern(gm, pattern, replacement):
    """Rewrite ``gm`` in place; returns the list of ``Match(anchor, nodes_map)`` replaced.

    Args:
        gm: the ``GraphModule`` to rewrite.
        pattern, replacement: functions (or modules) with the same arguments, traced
            with ``symbolic_trace``.
    """
    from ember.fx._symbolic_trace import symbolic_trace

    pattern_graph = symbolic_trace(pattern).graph
    replacement_graph = symbolic_trace(replacement).graph
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    anchor = pattern_graph.nodes[-1].args[0]
    if not isinstance(anchor, Node):
        raise ValueError("replace_pattern needs a pattern that returns one traced value")
    if any(n.op == "get_attr" for n in replacement_graph.nodes):
        raise ValueError("replace_pattern: the replacement may not read module attributes (get_attr)")
    graph = gm.graph
    matches = []
    erased = set()
    for node in graph.nodes:
        if node in erased or node.op in ("placeholder", "output"):
            continue
        mapping = {}
        if not _match(anchor, node, mapping) or not _self_contained(mapping, anchor):
            continue
        values = [mapping[p] for p in pattern_inputs]
        with graph.inserting_before(node):
            remap = dict(zip([n for n in replacement_graph.nodes if n.op == "placeholder"], values))
            for r in replacement_graph.nodes:
                if r.op == "placeholder":
                    continue
                if r.op == "output":
                    result = map_arg(r.args[0], remap.__getitem__)
                    break
                remap[r] = graph.node_copy(r, remap.__getitem__)
        node.replace_all_uses_with(result)
        inner = [g for p, g in mapping.items() if p.op != "placeholder"]
        for g in sorted(inner, key=graph.nodes.index, reverse=True):
            graph.erase_node(g)
            erased.add(g)
        matches.append(Match(node, mapping))
    gm.recompile()
    return matches


def _match(pattern_node, node, mapping):
    if pattern_node.op == "placeholder":
        if pattern_node in mapping:
            return mapping[pattern_node] is node
        mapping[pattern_node] = node
        return True
    if pattern_node in mapping:
        return mapping[pattern_node] is node
    if not isinstance(node, Node) or node.op != pattern_node.op or not _same_target(pattern_node, node):
        return False
    if len(node.args) != len(pattern_node.args) or set(node.kwargs) != set(pattern_node.kwargs):
        return False
    mapping[pattern_node] = node
    pairs = list(zip(pattern_node.args, node.args)) + [(pattern_node.kwargs[k], node.kwargs[k]) for k in node.kwargs]
    return all(_match_arg(p, g, mapping) for p, g in pairs)


def _match_arg(p, g, mapping):
    if isinstance(p, Node):
        return _match(p, g, mapping)
    if isinstance(p, (tuple, list)):
        return type(p) is type(g) and len(p) == len(g) and all(_match_arg(a, b, mapping) for a, b in zip(p, g))
    return not isinstance(g, Node) and p == g


def _same_target(p, g):
    if callable(p.target) and not isinstance(p.target, str):
        return getattr(p.target, "__fx_original__", p.target) is getattr(g.target, "__fx_original__", g.target)
    return p.target == g.target


def _self_contained(mapping, anchor):
    """The values a match computes (other than its result) are used only inside it."""
    inner = {g for p, g in mapping.items() if p.op != "placeholder"}
    for p, g in mapping.items():
        if p.op == "placeholder" or p is anchor:
            continue
        if any(user not in inner for user in g.users):
            return False
    return True
