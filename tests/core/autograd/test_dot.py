"""Tests for ember/autograd/dot.py: the DOT export draws the same graph that PyTorch
records for the same program (node names and edges), numbers its nodes in the order
both engines really run them, and draws the inputs: the leaves and the ends of the
``(None, 0)`` edges."""

import re
from collections import deque

import pytest
import torch

import ember
from ember.autograd import graph_to_dot
from ember.autograd.dot import execution_order


def run_order(tensor):
    """The nodes of ``tensor``'s graph (torch's or ember's: both have ``next_functions``
    and node pre-hooks) in the order the library's engine really runs them."""
    nodes, queue = [], deque([tensor.grad_fn])
    while queue:
        node = queue.popleft()
        if node not in nodes:
            nodes.append(node)
            queue.extend(child for child, _ in node.next_functions if child is not None)
    ran = []
    for node in nodes:
        node.register_prehook(lambda grads, node=node: ran.append(node))
    tensor.backward()
    return ran


def torch_graph(tensor):
    """(names in the order torch's engine ran them, edges as step pairs)."""
    ran = run_order(tensor)
    step = {node: i for i, node in enumerate(ran, 1)}
    edges = [(step[node], step[child]) for node in ran for child, _ in node.next_functions if child is not None]
    return [type(node).__name__ for node in ran], sorted(edges)


def dot_graph(text):
    """(names by step, edges between steps) parsed back from graph_to_dot's text."""
    names = {int(i): label.split(". ", 1)[1] for i, label in re.findall(r'^\s+n(\d+) \[label="([^"]*)"', text, re.M)}
    edges = [(int(a), int(b)) for a, b in re.findall(r"^\s+n(\d+) -> n(\d+)", text, re.M)]
    return [names[i] for i in range(1, len(names) + 1)], sorted(edges)


PROGRAMS = {
    "mlp": lambda lib, x, w, b: ((x @ w + b).tanh() * x.sum()).sum(),
    "shared input": lambda lib, x, w, b: ((x * x) + (x @ w.t()).sum(1, keepdim=True)).mean(),
    "views": lambda lib, x, w, b: (x.t()[1:] * 2).exp().sum() + b.sum(),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_graph_matches_torch(name):
    program = PROGRAMS[name]
    shapes = [(3, 4), (4, 4), (4,)]
    torch_inputs = [torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes]
    ember_inputs = [ember.tensor(t.detach().numpy(), requires_grad=True) for t in torch_inputs]
    expected = torch_graph(program(torch, *torch_inputs))
    assert dot_graph(graph_to_dot(program(ember, *ember_inputs))) == expected


@pytest.mark.parametrize("name", PROGRAMS)
def test_steps_are_the_order_the_engine_runs_the_nodes(name):
    inputs = [ember.randn(*s, dtype=ember.float64, requires_grad=True) for s in [(3, 4), (4, 4), (4,)]]
    out = PROGRAMS[name](ember, *inputs)
    drawn = execution_order(out.grad_fn)
    assert drawn == run_order(out)
    text = graph_to_dot(out)
    for step, node in enumerate(drawn, 1):
        assert f'  n{step} [label="{step}. {node.name()}"' in text


def test_leaves_are_drawn_with_name_and_shape():
    w = ember.ones(2, 3, requires_grad=True)
    x = ember.ones(3)
    text = graph_to_dot((w @ x).sum(), params={"weight": w})
    assert '[label="3. AccumulateGrad", style=filled, fillcolor=lightblue];' in text
    assert '  leaf3 [label="weight (2, 3)\\nrequires_grad", shape=oval' in text
    assert "  n3 -> leaf3 [label=\".grad\", style=dotted];" in text
    assert 't [label="tensor ()", shape=oval];' in text


def test_none_edges_end_at_the_input_that_needs_no_grad():
    w = ember.ones(3, requires_grad=True)
    x = ember.ones(3)
    out = (w * x * 2).sum()
    # torch's graph has the same None edges: MulBackward0 of (w * x) has (None, 0) for x,
    # and the MulBackward0 of (... * 2) has one for the scalar.
    tw = torch.ones(3, requires_grad=True)
    t_out = (tw * torch.ones(3) * 2).sum()
    t_none = sum(child is None for node in (t_out.grad_fn.next_functions[0][0],
                                             t_out.grad_fn.next_functions[0][0].next_functions[0][0])
                 for child, _ in node.next_functions)
    text = graph_to_dot(out, params={"w": w, "x": x})
    assert text.count('[label="(None, 0)", style=dashed') == t_none == 2
    assert 'none3_1 [label="x (3,)\\nno grad"' in text
    assert 'none2_1 [label="scalar 2"' in text
    assert "n3 -> none3_1" in text and "n2 -> none2_1" in text


def test_a_none_edge_of_a_node_that_saved_nothing_ends_at_none():
    class Scale(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None

    w = ember.ones(2, requires_grad=True)
    text = graph_to_dot(Scale.apply(w, ember.ones(2)).sum())
    assert 'none2_1 [label="None", shape=oval, style=dashed' in text
    assert 'n2 -> none2_1 [label="(None, 0)"' in text


def test_the_none_edge_of_copy_slices_is_its_in_place_op_s_input():
    w = ember.ones(4, requires_grad=True)
    base = w * 1
    base[1:].mul_(3)
    text = graph_to_dot(base.sum(), params={"w": w})
    tw = torch.ones(4, requires_grad=True)
    t_base = tw * 1
    t_base[1:].mul_(3)
    t_copy = t_base.sum().grad_fn.next_functions[0][0]
    assert type(t_copy).__name__ == "CopySlices" and t_copy.next_functions[1] == (None, 0)
    assert '  n2 [label="2. CopySlices"];' in text
    assert 'none2_1 [label="scalar 3"' in text and 'none3_1 [label="scalar 1"' in text


def test_unnamed_leaf_and_multi_output_edge_label():
    x = ember.randn(4, 3, requires_grad=True)
    values, indices = x.max(dim=1)
    text = graph_to_dot(values.sum())
    assert "leaf (4, 3)\\nrequires_grad" in text
    # max(dim=) has two outputs; `values` is output 0 of MaxBackward0, which the
    # edge from SumBackward0 says.
    assert '  n1 -> n2 [label="0"];\n  n2 [label="2. MaxBackward0"];' in text
    assert len(re.findall(r"n\d+ -> n\d+", text)) == 2


def test_same_program_gives_the_same_text():
    w = ember.ones(3, requires_grad=True)
    assert graph_to_dot((w * w).sum()) == graph_to_dot((w * w).sum())


def test_a_leaf_alone_is_its_accumulator():
    w = ember.ones(2, requires_grad=True)
    expected = '  n1 [label="1. AccumulateGrad", style=filled, fillcolor=lightblue];'
    assert graph_to_dot(w).splitlines()[5] == expected


def test_errors():
    with pytest.raises(ValueError, match="no autograd graph"):
        graph_to_dot(ember.ones(2))
    with pytest.raises(TypeError, match="expects an ember Tensor"):
        graph_to_dot(torch.ones(2, requires_grad=True))
