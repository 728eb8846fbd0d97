"""ember.jit.trace: the op-level graph reruns every zoo model and every nn layer family
with the original's outputs and gradients.

PyTorch counterpart: test/jit/test_tracer.py (v2.13).
"""

import numpy as np
import pytest

import ember
import ember.jit as jit
from ember import nn

ZOO = [
    ("resnet8_cifar", lambda: (ember.randn(2, 3, 32, 32),)),
    ("transformer_seq2seq_tiny", lambda: (ember.randint(0, 10, (2, 5)), ember.randint(0, 10, (2, 4)))),
    ("gpt_nano", lambda: (ember.randint(0, 10, (2, 6)),)),
    ("yolo_nano", lambda: (ember.randn(1, 3, 64, 64),)),
    ("char_lstm_small", lambda: (ember.randint(0, 20, (2, 7)),)),
]


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _assert_same(a, b):
    for x, y in zip(_flat(a), _flat(b), strict=True):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())


def _grads(model, inputs):
    model.zero_grad()
    sum(o.float().sum() for o in _flat(model(*inputs))).backward()
    return {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("name, make_inputs", ZOO, ids=[z[0] for z in ZOO])
def test_zoo_models_trace_to_the_same_outputs_and_gradients(name, make_inputs):
    ember.manual_seed(0)
    model = ember.zoo.create_model(name).eval()
    inputs = make_inputs()
    traced = jit.trace(model, inputs)
    assert all(n.op in ("placeholder", "get_attr", "call_function", "output") for n in traced.graph.nodes)
    _assert_same(traced(*inputs), model(*inputs))
    ours, theirs = _grads(traced, inputs), _grads(model, inputs)
    assert ours.keys() <= theirs.keys() and ours
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-7, err_msg=key)


def _layers():
    return {
        "linear": (nn.Linear(4, 3), (2, 4)),
        "bilinear": (nn.Bilinear(4, 4, 2), None),
        "conv1d": (nn.Conv1d(2, 3, 3, padding=1), (2, 2, 7)),
        "conv2d": (nn.Conv2d(2, 3, 3, stride=2, groups=1), (2, 2, 7, 7)),
        "conv_transpose2d": (nn.ConvTranspose2d(2, 3, 3, stride=2), (1, 2, 4, 4)),
        "max_pool2d": (nn.MaxPool2d(2), (1, 2, 6, 6)),
        "avg_pool2d": (nn.AvgPool2d(3, stride=2, padding=1), (1, 2, 6, 6)),
        "adaptive_avg_pool2d": (nn.AdaptiveAvgPool2d(1), (2, 3, 5, 5)),
        "batch_norm2d": (nn.BatchNorm2d(3).eval(), (2, 3, 4, 4)),
        "layer_norm": (nn.LayerNorm(5), (2, 3, 5)),
        "group_norm": (nn.GroupNorm(2, 4), (2, 4, 3, 3)),
        "embedding": (nn.Embedding(10, 4), "tokens"),
        "dropout_eval": (nn.Dropout(0.5).eval(), (3, 4)),
        "relu": (nn.ReLU(), (3, 4)),
        "gelu": (nn.GELU(), (3, 4)),
        "silu": (nn.SiLU(), (3, 4)),
        "softmax": (nn.Softmax(dim=-1), (3, 4)),
        "flatten": (nn.Flatten(), (2, 3, 4)),
        "upsample": (nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
        "multihead_attention": (nn.MultiheadAttention(8, 2, batch_first=True), "attention"),
        "transformer_encoder_layer": (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                                      (2, 5, 8)),
    }


def layer_and_inputs(family):
    """The layer of ``family`` and example inputs for it (tests/core/fx uses these too)."""
    layer, shape = _layers()[family]
    if shape == "tokens":
        return layer, (ember.randint(0, 10, (2, 5)),)
    if shape == "attention":
        return _SelfAttention(layer), (ember.randn(2, 5, 8),)
    if shape is None:
        return layer, (ember.randn(3, 4), ember.randn(3, 4))
    return layer, (ember.randn(*shape),)


@pytest.mark.parametrize("family", sorted(_layers()))
def test_every_layer_family_traces_to_the_same_outputs(family):
    ember.manual_seed(0)
    layer, inputs = layer_and_inputs(family)
    traced = jit.trace(layer, inputs)
    _assert_same(traced(*inputs), layer(*inputs))
    fresh = tuple(ember.randn(*x.shape) if x.dtype.is_floating_point else x for x in inputs)
    _assert_same(traced(*fresh), layer(*fresh))  # the graph, not the example, decides


class _SelfAttention(nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, x):
        return self.attention(x, x, x)[0]


def test_in_place_ops_are_recorded_as_a_write():
    def f(x):
        y = x * 2
        y.relu_()
        y += 1
        return y

    x = ember.randn(6)
    traced = jit.trace(f, x)
    targets = [n.target.qualname for n in traced.graph.nodes if n.op == "call_function"]
    assert targets == ["aten::mul", "aten::relu", "aten::add"]
    fresh = ember.randn(6)
    _assert_same(traced(fresh), f(fresh))


def test_a_detached_input_stays_the_input():
    # torch.jit.trace records aten::detach; ember's detach runs no op, so the trace binds its
    # result to the source's node (a detached input once became a constant of the graph)
    traced = jit.trace(lambda x: x.detach() * 2, ember.ones(3))
    assert "tensor_constant" not in traced.code
    np.testing.assert_array_equal(traced(ember.arange(3.0)).numpy(), [0.0, 2.0, 4.0])


def test_a_write_through_a_view_is_refused():
    def f(x):
        y = x * 1
        y[0].mul_(0)  # changes y through a view
        return y + 1

    with pytest.raises(jit.TracingError, match="modified in place through a view"):
        jit.trace(f, ember.randn(3, 2))


def test_traced_code_reads_like_make_fx():
    traced = jit.trace(lambda x: ember.relu(x * 2) + 1, ember.ones(3))
    assert traced.code.splitlines()[1:] == [
        "    mul = ember.ops.aten.mul(x, 2); x = None",
        "    relu = ember.ops.aten.relu(mul); mul = None",
        "    add = ember.ops.aten.add(relu, 1); relu = None",
        "    return add",
    ]


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="example inputs must be tensors"):
        jit.trace(lambda x, n: x * n, (ember.ones(2), 3))


def test_the_dispatcher_records_nothing_outside_a_trace():
    from ember.dispatch_modes import modes

    jit.trace(lambda x: x + 1, ember.ones(2))
    assert modes.trace is None and modes.active is False
