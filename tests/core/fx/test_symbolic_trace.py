"""ember.fx.symbolic_trace against the original modules (same outputs and gradients) and
against torch.fx on the same program (same opcodes and targets, in order).

PyTorch counterpart: test/test_fx.py (v2.13).
"""

import operator

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx as fx
from ember import nn


def _same(a, b):
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())


def _grads(model, inputs):
    model.zero_grad()
    out = model(*inputs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    sum(o.float().sum() for o in out).backward()
    return {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}


def _same_grads(traced, model, inputs):
    ours, theirs = _grads(traced, inputs), _grads(model, inputs)
    assert ours.keys() == theirs.keys() and ours
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_resnet_traces_with_same_outputs_and_gradients():
    ember.manual_seed(0)
    model = ember.zoo.create_model("resnet8_cifar")
    gm = fx.symbolic_trace(model)
    x = ember.randn(2, 3, 32, 32)
    model.eval()
    gm.eval()
    _same(gm(x), model(x))
    model.train()
    gm.train()
    _same_grads(gm, model, (x,))


@pytest.mark.parametrize("name", ["se_resnet8_cifar", "cbam_resnet8_cifar", "eca_resnet8_cifar", "ca_resnet8_cifar"])
def test_attention_resnets_trace_with_same_outputs_and_gradients(name):
    # (coordinate attention splits by the map's height and width: read from the Proxy's
    # shape, they are values of the graph, not Python control flow)
    ember.manual_seed(0)
    model = ember.zoo.create_model(name)
    gm = fx.symbolic_trace(model)
    x = ember.randn(2, 3, 16, 12)
    model.eval()
    gm.eval()
    _same(gm(x), model(x))
    model.train()
    gm.train()
    _same_grads(gm, model, (x,))


ZOO_WITH_SHAPE_CHECKS = [
    ("transformer_seq2seq_tiny", lambda: (ember.randint(0, 10, (2, 5)), ember.randint(0, 10, (2, 4)))),
    ("gpt_nano", lambda: (ember.randint(0, 10, (2, 6)),)),
    ("yolo_nano", lambda: (ember.randn(1, 3, 64, 64),)),
]


@pytest.mark.parametrize("name, make_inputs", ZOO_WITH_SHAPE_CHECKS, ids=[z[0] for z in ZOO_WITH_SHAPE_CHECKS])
def test_zoo_models_that_check_shapes_trace_with_example_inputs(name, make_inputs):
    ember.manual_seed(0)
    model = ember.zoo.create_model(name).eval()
    inputs = make_inputs()
    with pytest.raises(fx.TraceError, match="control flow"):
        fx.symbolic_trace(model)  # PyTorch's rule: a Proxy has no value to branch on
    gm = fx.symbolic_trace(model, example_inputs=inputs)
    _same(gm(*inputs), model(*inputs))
    _same_grads(gm, model, inputs)


def test_recurrent_zoo_model_traces_with_concrete_args():
    ember.manual_seed(0)
    model = ember.zoo.create_model("char_lstm_small").eval()
    with pytest.raises(fx.TraceError, match="control flow"):
        fx.symbolic_trace(model)  # `if return_state:` on a Proxy
    gm = fx.symbolic_trace(model, concrete_args={"state": None, "return_state": False})
    assert [n.op for n in gm.graph.nodes].count("placeholder") == 1
    x = ember.randint(0, 20, (2, 7))
    _same(gm(x), model(x))
    _same_grads(gm, model, (x,))


def test_every_zoo_model_family_is_traced_here():
    families = {n.split("_")[0].rstrip("0123456789") for n in ember.zoo.list_models()}
    assert families <= {"resnet", "resnext", "wide", "transformer", "gpt", "yolo", "char", "se", "cbam", "eca", "ca"}


def test_concrete_args_take_one_side_of_a_branch():
    def f(x, flag):
        if flag:
            return x * 2
        return x - 1

    gm = fx.symbolic_trace(f, concrete_args={"flag": False})
    x = ember.randn(3)
    _same(gm(x), x - 1)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [operator.sub]
    with pytest.raises(fx.TraceError, match="does not take"):
        fx.symbolic_trace(f, concrete_args={"nope": 1})


def test_iteration_and_len_follow_pytorch():
    def unpack(x):
        a, b = x.chunk(2)
        return a + b

    _same(fx.symbolic_trace(unpack)(ember.arange(4.0)), ember.tensor([2.0, 4.0]))

    def loop(x):
        return [y for y in x]

    with pytest.raises(fx.TraceError, match="cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(lambda x: len(x))


class _Block(nn.Module):
    """The same program written for ember; _TorchBlock is its torch twin."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 2)
        self.scale = nn.Parameter(ember.ones(1))

    def forward(self, x):
        y = ember.relu(self.bn(self.conv(x))) + x.mean(1, keepdim=True)
        y = nn.functional.max_pool2d(y, 2) * self.scale
        return self.fc(y.mean((2, 3))).softmax(-1)


class _TorchBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 2)
        self.scale = torch.nn.Parameter(torch.ones(1))

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x))) + x.mean(1, keepdim=True)
        y = torch.nn.functional.max_pool2d(y, 2) * self.scale
        return self.fc(y.mean((2, 3))).softmax(-1)


def _signature(graph):
    rows = []
    for n in graph.nodes:
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
        rows.append((n.op, n.name, target))
    return rows


def test_graph_matches_torch_fx_on_the_same_program():
    ours = fx.symbolic_trace(_Block())
    theirs = torch.fx.symbolic_trace(_TorchBlock())
    assert _signature(ours.graph) == _signature(theirs.graph)
    # the same weights give the same numbers through both traced modules
    torch_model = _TorchBlock().eval()
    model = _Block().eval()
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()})
    traced_torch = torch.fx.symbolic_trace(torch_model)
    traced = fx.symbolic_trace(model)
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(traced(ember.tensor(x)).detach().numpy(), traced_torch(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_generated_code_is_the_graph_in_python():
    gm = fx.symbolic_trace(_Block())
    code = gm.code
    assert code.startswith("def forward(self, x):")
    assert "conv = self.conv(x)" in code
    assert "relu = ember.relu(bn)" in code
    assert "max_pool2d = ember.nn.functional.max_pool2d(add, 2)" in code
    assert "softmax = fc.softmax(-1)" in code
    assert code.rstrip().endswith("return softmax")


class _Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        return self.inner(x).tanh()


class _KeepCustom(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, _Custom) or super().is_leaf_module(m, qualname)


def test_leaf_modules_are_chosen_by_the_tracer():
    outer = nn.Sequential(_Custom(), nn.ReLU())
    default = fx.symbolic_trace(outer)
    assert [n.target for n in default.graph.nodes if n.op == "call_module"] == ["0.inner", "1"]
    graph = _KeepCustom().trace(outer)
    assert [n.target for n in graph.nodes if n.op == "call_module"] == ["0", "1"]
    gm = fx.GraphModule(outer, graph)
    x = ember.randn(2, 3)
    _same(gm(x), outer(x))


def _my_norm(x):
    return x / x.norm()


fx.wrap("_my_norm")


def test_wrap_records_a_free_function_as_one_call():
    gm = fx.symbolic_trace(lambda x: _my_norm(x) + 1)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets[0].__name__ == "_my_norm" and targets[1] is operator.add
    x = ember.randn(4)
    _same(gm(x), _my_norm(x) + 1)


def test_namespaces_are_restored_after_a_failed_trace():
    relu = ember.relu
    call = nn.Module.__call__
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(lambda x: x if x.sum() > 0 else -x)
    assert ember.relu is relu and nn.Module.__call__ is call


def _layer_cases():
    """The nn layer families of tests/core/jit/test_trace.py (one list for both tests)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "jit" / "test_trace.py"
    spec = importlib.util.spec_from_file_location("jit_layer_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_JIT_CASES = _layer_cases()


class _NoLeaves(fx.Tracer):
    """Traces through every layer, down to ember's functions and tensor methods."""

    def is_leaf_module(self, m, qualname):
        return False


@pytest.mark.parametrize("family", sorted(_JIT_CASES._layers()))
def test_every_layer_family_traces_through_to_functions(family):
    ember.manual_seed(0)
    layer, inputs = _JIT_CASES.layer_and_inputs(family)
    tracer = _NoLeaves()
    graph = tracer.trace(layer, example_inputs=inputs)
    assert not [n for n in graph.nodes if n.op == "call_module"]
    gm = fx.GraphModule(fx.graph_module.attribute_source(tracer.root, graph, tracer.tensor_constants), graph)
    _same(gm(*inputs), layer(*inputs))


def test_a_plugin_functional_met_again_in_one_trace_is_traced_each_time():
    from ember.plugins import registry

    def twice(x):
        return nn.functional.gelu(nn.functional.gelu(x))

    def call_targets(gm):
        return [n.target for n in gm.graph.nodes if n.op == "call_function"]

    registry.invalidate()  # the first trace finds gelu through the catalogue, the second remembered
    for _ in range(2):
        gm = fx.symbolic_trace(twice)
        assert [getattr(t, "__name__", t) for t in call_targets(gm)] == ["gelu", "gelu"]
        _same(gm(ember.arange(4.0)), twice(ember.arange(4.0)))
    assert vars(nn.functional)["gelu"] is nn.functional.gelu  # the bare function again, not a wrapper
