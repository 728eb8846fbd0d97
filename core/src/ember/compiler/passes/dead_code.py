"""Dead-code elimination: drop every node whose value nothing reads.

PyTorch counterpart: torch/fx/graph.py (``Graph.eliminate_dead_code``) as
torch/_inductor uses it (v2.13). A captured op graph is pure (in-place writes were
recorded as values), so every unused node can go.
"""


def eliminate_dead_code(graph):
    """Remove unused nodes; returns how many went."""
    before = len(graph)
    graph.eliminate_dead_code()
    return before - len(graph)
