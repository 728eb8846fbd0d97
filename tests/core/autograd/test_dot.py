"""Tests for ember/autograd/dot.py: the DOT export draws the same graph that PyTorch
records for the same program (node names and edges, walked the same way)."""

import re
from collections import deque

import pytest
import torch

import ember
from ember.autograd import graph_to_dot


def torch_graph(tensor):
    """(names by discovery order, edges as index pairs) of torch's graph, walked
    breadth-first through next_functions as graph_to_dot walks ember's."""
    root = tensor.grad_fn
    ids = {root: 0}
    edges = []
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child not in ids:
                ids[child] = len(ids)
                queue.append(child)
            edges.append((ids[node], ids[child]))
    names = [type(node).__name__ for node in ids]
    return names, edges


def dot_graph(text):
    """(names by node number, edges) parsed back from graph_to_dot's text."""
    names = {int(i): label.split("\\n")[0] for i, label in re.findall(r'^\s+n(\d+) \[label="([^"]*)"', text, re.M)}
    edges = [(int(a), int(b)) for a, b in re.findall(r"^\s+n(\d+) -> n(\d+)", text, re.M)]
    return [names[i] for i in range(len(names))], edges


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


def test_leaves_are_labelled_by_name_and_shape():
    w = ember.ones(2, 3, requires_grad=True)
    x = ember.ones(3)
    text = graph_to_dot((w @ x).sum(), params={"weight": w})
    assert 'label="AccumulateGrad\\nweight (2, 3)"' in text
    assert 't [label="tensor ()", shape=oval];' in text


def test_unnamed_leaf_and_multi_output_edge_label():
    x = ember.randn(4, 3, requires_grad=True)
    values, indices = x.max(dim=1)
    text = graph_to_dot(values.sum())
    assert "AccumulateGrad\\nleaf (4, 3)" in text
    # max(dim=) has two outputs; `values` is output 0 of MaxBackward0, which the
    # edge from SumBackward0 says.
    assert '  n1 [label="MaxBackward0"];\n  n0 -> n1 [label="0"];' in text
    assert text.count("->") == 3


def test_same_program_gives_the_same_text():
    w = ember.ones(3, requires_grad=True)
    assert graph_to_dot((w * w).sum()) == graph_to_dot((w * w).sum())


def test_a_leaf_alone_is_its_accumulator():
    w = ember.ones(2, requires_grad=True)
    expected = '  n0 [label="AccumulateGrad\\nleaf (2,)", style=filled, fillcolor=lightblue];'
    assert graph_to_dot(w).splitlines()[3] == expected


def test_errors():
    with pytest.raises(ValueError, match="no autograd graph"):
        graph_to_dot(ember.ones(2))
    with pytest.raises(TypeError, match="expects an ember Tensor"):
        graph_to_dot(torch.ones(2, requires_grad=True))
