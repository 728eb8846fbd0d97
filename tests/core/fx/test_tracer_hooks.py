"""A Tracer subclass's create_node sees every node, placeholders and the output
included, as in torch (pytorch/examples' fx/custom_tracer.py relies on it)."""

import torch

import ember


def _kinds_seen(lib):
    seen = []

    class Recording(lib.fx.Tracer):
        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            seen.append((kind, str(target) if kind in ("placeholder", "output") else kind))
            return super().create_node(kind, target, args, kwargs, name, type_expr)

    class Model(lib.nn.Module):
        def forward(self, x, y=3):
            return lib.relu(x) + y

    graph = Recording().trace(Model())
    return seen, [(n.op, n.args) for n in graph.nodes if n.op == "placeholder"]


def test_create_node_overrides_see_placeholders_and_the_output():
    assert _kinds_seen(ember) == _kinds_seen(torch)
