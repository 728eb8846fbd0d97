"""Capture for ``ember.compile``: the module's forward as an op-level graph plus the
tensors its ``get_attr`` nodes read.

PyTorch counterpart: torch/_dynamo (capture) and torch/_functorch/aot_autograd.py
(lowering to aten ops) (v2.13); ember's capture is ``ember.jit.trace`` at the dispatcher.
"""


def capture(module, inputs):
    """``(graph, {path: tensor})`` for ``module`` on ``inputs``; raises TracingError for what
    the trace cannot record."""
    from ember.fx.graph_module import fetch_attr
    from ember.jit import trace

    traced = trace(module, tuple(inputs), check_trace=False)
    attributes = {}
    for node in traced.graph.nodes:
        if node.op == "get_attr":
            attributes[node.target] = fetch_attr(traced, node.target).detach()
    return traced.graph, attributes

