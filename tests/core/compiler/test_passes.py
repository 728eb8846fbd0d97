"""Each ember.compile pass on a small captured graph, against the eager result.

PyTorch counterpart: test/inductor/test_pattern_matcher.py and test_torchinductor.py
(pass-level checks) (v2.13).
"""

import numpy as np
import pytest

import ember
from ember import nn
from ember.compiler.capture import capture
from ember.compiler.executor import Program, _plan_run
from ember.compiler.passes import (
    FusedElementwise,
    eliminate_dead_code,
    fold_constants,
    fold_conv_bn,
    fuse_elementwise,
)


def _capture(fn_or_module, *inputs):
    module = fn_or_module if isinstance(fn_or_module, nn.Module) else _Wrap(fn_or_module)
    with ember.no_grad():
        return capture(module.eval(), inputs)


class _Wrap(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


def _run(graph, attributes, *inputs):
    """Run the graph both as the compiled program and through ember ops (its nodes are
    callable on tensors), so a pass is checked in both executors."""
    program = Program(graph, attributes, inputs, inputs[0].device)
    compiled = program.run(*[x._data for x in inputs])
    eager = _plan_run(graph, attributes, inputs)[graph.nodes[-1].args[0]]
    return compiled, ember.from_numpy(eager)


def _ops(graph):
    return [getattr(n.target, "qualname", None) or type(n.target).__name__
            for n in graph.nodes if n.op == "call_function"]


def test_dead_code_elimination_drops_unused_ops():
    def f(x):
        unused = x.exp()  # noqa: F841  (traced, then dead)
        return x + 1

    graph, attributes = _capture(f, ember.randn(3))
    graph.call_function(ember.ops.aten.neg, (graph.nodes[0],))  # dangling before the output is fine to add
    graph._nodes.insert(len(graph._nodes) - 1, graph._nodes.pop())
    assert "aten::neg" in _ops(graph)
    assert eliminate_dead_code(graph) == 1
    assert _ops(graph) == ["aten::add"]


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(ember.randn(4, 3))

    def forward(self, x):
        return x @ (self.weight * 2).t() + self.weight.sum()


def test_constant_folding_computes_weight_only_ops_once():
    ember.manual_seed(0)
    model = _Scaled()
    x = ember.randn(2, 3)
    graph, attributes = _capture(model, x)
    before = _ops(graph)
    assert fold_constants(graph, attributes) == 3  # mul, t, sum
    after = _ops(graph)
    assert len(after) == len(before) - 3 and "aten::sum" not in after
    compiled, eager = _run(graph, attributes, x)
    np.testing.assert_allclose(compiled.numpy(), model(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(eager.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def _conv_bn(bias):
    ember.manual_seed(1)
    bn = nn.BatchNorm2d(4)
    bn.running_mean.copy_(ember.randn(4))
    bn.running_var.copy_(ember.rand(4) + 0.5)
    with ember.no_grad():
        bn.weight.copy_(ember.randn(4))
        bn.bias.copy_(ember.randn(4))
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=bias), bn, nn.ReLU()).eval()


@pytest.mark.parametrize("bias", [True, False])
def test_conv_bn_folding_matches_eager(bias):
    model = _conv_bn(bias)
    x = ember.randn(2, 3, 5, 5)
    graph, attributes = _capture(model, x)
    fold_constants(graph, attributes)
    assert "norm::batch_norm" in _ops(graph)
    assert fold_conv_bn(graph, attributes) == 1
    assert _ops(graph) == ["aten::convolution", "aten::relu"]
    compiled, _ = _run(graph, attributes, x)
    np.testing.assert_allclose(compiled.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_conv_bn_folding_leaves_a_shared_convolution_alone():
    conv = nn.Conv2d(3, 4, 1)
    bn = nn.BatchNorm2d(4).eval()
    graph, attributes = _capture(lambda x: bn(conv(x)) + conv(x), ember.randn(1, 3, 2, 2))
    fold_constants(graph, attributes)
    convs = _ops(graph).count("aten::convolution")
    fold_conv_bn(graph, attributes)
    assert _ops(graph).count("aten::convolution") == convs


def test_fusion_makes_one_kernel_per_chain():
    def f(x, y):
        return ((x * 2 + y).relu() - 1).sigmoid().exp()

    x, y = ember.randn(3, 4), ember.randn(3, 4)
    graph, attributes = _capture(f, x, y)
    assert fuse_elementwise(graph, _plan_run(graph, attributes, (x, y))) == 1
    (fused,) = [n.target for n in graph.nodes if n.op == "call_function"]
    assert isinstance(fused, FusedElementwise)
    assert [q for q, _ in fused.steps] == ["aten::mul", "aten::add", "aten::relu", "aten::sub", "aten::sigmoid",
                                           "aten::exp"]
    compiled, eager = _run(graph, attributes, x, y)
    np.testing.assert_allclose(compiled.numpy(), f(x, y).numpy(), rtol=1e-6)
    np.testing.assert_allclose(eager.numpy(), f(x, y).numpy(), rtol=1e-6)


def test_fusion_stops_where_a_value_is_read_twice():
    def f(x):
        a = x.exp()
        return (a + 1) * a  # a has two readers: the chain ends at a

    x = ember.randn(5)
    graph, attributes = _capture(f, x)
    fuse_elementwise(graph, _plan_run(graph, attributes, (x,)))
    kinds = [[q for q, _ in n.target.steps] for n in graph.nodes if isinstance(n.target, FusedElementwise)]
    assert kinds == [["aten::exp"], ["aten::add", "aten::mul"]]
    compiled, _ = _run(graph, attributes, x)
    np.testing.assert_allclose(compiled.numpy(), f(x).numpy(), rtol=1e-6)


def test_fused_chain_writes_into_a_fresh_single_use_operand():
    conv = nn.Conv2d(2, 2, 1).eval()
    x = ember.randn(1, 2, 3, 3)
    graph, attributes = _capture(lambda x: (conv(x) + x).relu(), x)
    fuse_elementwise(graph, _plan_run(graph, attributes, (x,)))
    program = Program(graph, attributes, (x,), x.device)
    assert "out=v_convolution)" in program.source  # the convolution's own array, no allocation
    before = x.numpy().copy()
    out = program.run(x._data)
    np.testing.assert_array_equal(x.numpy(), before)  # the input is never written
    np.testing.assert_allclose(out.numpy(), (conv(x) + x).relu().detach().numpy(), rtol=1e-6)


def test_buffers_are_reused_across_calls_but_results_are_not():
    def f(x):
        return (x * 3).exp()  # x is an input: the chain writes into a buffer of its own

    x1, x2 = ember.randn(4), ember.randn(4)
    graph, attributes = _capture(f, x1)
    fuse_elementwise(graph, _plan_run(graph, attributes, (x1,)))
    program = Program(graph, attributes, (x1,), x1.device)
    assert len(program.buffers) == 1
    first = program.run(x1._data)
    second = program.run(x2._data)
    np.testing.assert_allclose(first.numpy(), f(x1).numpy(), rtol=1e-6)  # not overwritten by the second call
    np.testing.assert_allclose(second.numpy(), f(x2).numpy(), rtol=1e-6)
