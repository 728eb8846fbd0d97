"""ember.fx.Graph and GraphModule: building, editing, dead code, lint, the table and the code.

PyTorch counterpart: test/test_fx.py (graph manipulation tests) (v2.13).
"""

import operator

import numpy as np
import pytest

import ember
import ember.fx as fx


def _build():
    graph = fx.Graph()
    x = graph.placeholder("x")
    w = graph.get_attr("w")
    mul = graph.call_function(operator.mul, (x, w))
    relu = graph.call_method("relu", (mul,))
    graph.output(relu)
    return graph, (x, w, mul, relu)


def test_nodes_know_their_inputs_and_users():
    graph, (x, w, mul, relu) = _build()
    assert mul.all_input_nodes == [x, w]
    assert list(x.users) == [mul] and list(mul.users) == [relu]
    graph.lint()


def test_graph_module_runs_generated_code():
    graph, _ = _build()
    gm = fx.GraphModule({"w": ember.tensor([2.0, -1.0])}, graph)
    assert gm.code == ("def forward(self, x):\n"
                       "    w = self.w\n"
                       "    mul = x * w; x = w = None\n"
                       "    relu = mul.relu(); mul = None\n"
                       "    return relu\n")
    np.testing.assert_array_equal(gm(ember.tensor([1.0, 1.0])).numpy(), [2.0, 0.0])


def test_inserting_and_replacing_a_node():
    graph, (x, w, mul, relu) = _build()
    with graph.inserting_after(mul):
        neg = graph.call_function(operator.neg, (mul,))
    relu.replace_input_with(mul, neg)
    gm = fx.GraphModule({"w": ember.tensor([2.0, -1.0])}, graph)
    assert "neg = -mul" in gm.code
    np.testing.assert_array_equal(gm(ember.tensor([1.0, 1.0])).numpy(), [0.0, 1.0])


def test_dead_code_goes_and_used_nodes_cannot_be_erased():
    graph, (x, w, mul, relu) = _build()
    with graph.inserting_before(relu):
        graph.call_function(operator.add, (x, 1))
    assert len(graph) == 6
    assert graph.eliminate_dead_code()
    assert [n.name for n in graph.nodes] == ["x", "w", "mul", "relu", "output"]
    with pytest.raises(RuntimeError, match="still had 1 users"):
        graph.erase_node(mul)


def test_lint_finds_use_before_definition():
    graph = fx.Graph()
    x = graph.placeholder("x")
    later = fx.Graph().placeholder("y")
    graph.call_function(operator.add, (x, later))
    graph.output(x)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        graph.lint()


def test_names_are_unique_python_identifiers():
    graph = fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(operator.add, (x, 1))
    b = graph.call_function(operator.add, (a, 1))
    c = graph.call_method("sum", (b,))
    graph.output(c)
    assert [n.name for n in graph.nodes] == ["x", "add", "add_1", "sum_1", "output"]


def test_print_tabular(capsys):
    graph, _ = _build()
    graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[2].split() == ["placeholder", "x", "x", "()", "{}"]
    assert lines[4].split()[:3] == ["call_function", "mul", "operator.mul"]
    assert lines[-1].split()[:3] == ["output", "output", "output"]


def test_str_reads_like_pytorch():
    graph, _ = _build()
    text = str(graph)
    assert text.splitlines()[0] == "graph(x):"
    assert "%mul : [num_users=1] = call_function[target=operator.mul](args = (%x, %w), kwargs = {})" in text


def test_slices_and_constants_in_generated_code():
    gm = fx.symbolic_trace(lambda x: x[1:, ..., ::2] * float("inf"))
    assert "getitem = x[1:, Ellipsis, ::2]" in gm.code
    assert "float('inf')" in gm.code
    x = ember.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(gm(x).numpy(), (x[1:, ..., ::2] * float("inf")).numpy())
