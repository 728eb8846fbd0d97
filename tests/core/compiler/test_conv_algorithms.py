"""The compiled convolution algorithms (im2col, Winograd F(2x2, 3x3) and F(4x4, 3x3)), the
measured choice between them and its cache, against eager ember and torch.

PyTorch counterpart: test/nn/test_convolution.py (convolutions against a reference) and
test/test_cuda.py's cudnn benchmark checks (v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.compiler.passes import ALGORITHMS, CompiledConv2d, conv_algorithm_cache
from ember.compiler.passes import conv_algorithm as conv_algorithm_module

FORCED = list(ALGORITHMS)

# Float32 tolerances relative to the output's largest magnitude (NOTE [ Winograd F(4x4, 3x3) ]).
FLOAT32_TOLERANCE = {"im2col": 5e-6, "winograd_2x2": 5e-6, "winograd_4x4": 5e-5}


def _compiled_kernels(compiled):
    graph = next(iter(compiled.graphs.values()))
    return [n.target for n in graph.nodes if n.op == "call_function" and isinstance(n.target, CompiledConv2d)]


def _conv(c_in, c_out, padding, bias, dtype, seed=0, **kwargs):
    ember.manual_seed(seed)
    conv = nn.Conv2d(c_in, c_out, 3, padding=padding, bias=bias, **kwargs).to(getattr(ember, dtype)).eval()
    reference = torch.nn.Conv2d(c_in, c_out, 3, padding=padding, bias=bias, **kwargs).to(getattr(torch, dtype))
    reference.load_state_dict({k: torch.tensor(v.numpy()) for k, v in conv.state_dict().items()})
    return conv, reference.eval()


def _relative(got, expected):
    return np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30)


CASES = [  # (N, C, O, H, W, padding, bias): odd sizes, sizes not multiples of the tiles, one channel
    (1, 1, 1, 3, 3, 0, True),
    (2, 3, 5, 7, 9, 1, True),
    (1, 4, 6, 10, 5, 0, False),
    (3, 5, 3, 6, 6, 1, False),
    (2, 2, 4, 5, 11, 2, True),
    (1, 8, 7, 13, 4, 1, True),
]


@pytest.mark.parametrize("algorithm", FORCED)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_each_algorithm_matches_torch_in_float64(algorithm, case):
    N, C, O, H, W, padding, bias = case
    conv, reference = _conv(C, O, padding, bias, "float64")
    x = ember.randn(N, C, H, W, dtype=ember.float64)
    compiled = ember.compile(conv, conv_algorithm=algorithm)
    got = compiled(x).numpy()
    assert [k.algorithm for k in _compiled_kernels(compiled)] == [algorithm]
    with torch.no_grad():
        expected = reference(torch.tensor(x.numpy())).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("algorithm", FORCED)
@pytest.mark.parametrize("case", CASES[1:], ids=lambda c: "x".join(map(str, c)))
def test_each_algorithm_matches_eager_and_torch_in_float32(algorithm, case):
    N, C, O, H, W, padding, bias = case
    conv, reference = _conv(C, O, padding, bias, "float32")
    x = ember.randn(N, C, H, W)
    got = ember.compile(conv, conv_algorithm=algorithm)(x).numpy()
    with ember.no_grad():
        eager = conv(x).numpy()
    with torch.no_grad():
        expected = reference(torch.tensor(x.numpy())).numpy()
    assert _relative(got, eager) < FLOAT32_TOLERANCE[algorithm]
    assert _relative(got, expected) < FLOAT32_TOLERANCE[algorithm]


@pytest.mark.parametrize("algorithm", FORCED)
def test_rounding_on_a_resnet_sized_layer_is_what_the_docstring_states(algorithm):
    # 64 -> 64 channels at 16x16, the float32 error against a float64 reference
    conv, reference = _conv(64, 64, 1, True, "float32")
    x = ember.randn(2, 64, 16, 16)
    got = ember.compile(conv, conv_algorithm=algorithm)(x).numpy()
    with torch.no_grad():
        exact = reference.double()(torch.tensor(x.numpy(), dtype=torch.float64)).numpy()
    assert _relative(got, exact) < FLOAT32_TOLERANCE[algorithm]


class _Block(nn.Module):
    """conv-bn-relu-conv-bn, plus the input, then relu: a ResNet basic block."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = nn.functional.relu(self.bn1(self.conv1(x)))
        return nn.functional.relu(self.bn2(self.conv2(y)) + x)


def _torch_block(block):
    reference = torch.nn.Sequential()
    for name in ("conv1", "bn1", "conv2", "bn2"):
        layer = getattr(block, name)
        module = (torch.nn.Conv2d(layer.in_channels, layer.out_channels, 3, padding=1, bias=False)
                  if name.startswith("conv") else torch.nn.BatchNorm2d(layer.num_features))
        module.load_state_dict({k: torch.tensor(v.numpy()) for k, v in layer.state_dict().items()})
        reference.add_module(name, module)
    reference.double().eval()

    def forward(x):
        y = torch.relu(reference.bn1(reference.conv1(x)))
        return torch.relu(reference.bn2(reference.conv2(y)) + x)
    return forward


@pytest.mark.parametrize("algorithm", FORCED)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_folded_batch_norm_relu_and_residual_around_each_algorithm(algorithm, dtype):
    ember.manual_seed(1)
    block = _Block(3)
    with ember.no_grad():  # statistics that are not the identity
        for bn in (block.bn1, block.bn2):
            bn.running_mean.copy_(ember.randn(3) * 0.1)
            bn.running_var.copy_(ember.rand(3) + 0.5)
            bn.weight.copy_(ember.randn(3))
            bn.bias.copy_(ember.randn(3))
    block = block.to(getattr(ember, dtype)).eval()
    x = ember.randn(2, 3, 5, 7, dtype=getattr(ember, dtype))
    compiled = ember.compile(block, conv_algorithm=algorithm)
    got = compiled(x).numpy()
    kernels = _compiled_kernels(compiled)
    assert [k.algorithm for k in kernels] == [algorithm, algorithm]
    assert [k.epilogue for k in kernels] == [("relu",), ("add", "relu")]  # folded into the kernels
    with ember.no_grad():
        eager = block(x).numpy()
    with torch.no_grad():
        expected = _torch_block(block)(torch.tensor(x.numpy(), dtype=torch.float64)).numpy()
    tolerance = 1e-12 if dtype == "float64" else FLOAT32_TOLERANCE[algorithm] * 4
    assert _relative(got, expected) < tolerance
    assert _relative(got, eager) < tolerance


class _Epilogues(nn.Module):
    """A residual add without ReLU (residual first), and a convolution read twice."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 3, 3, padding=1)
        self.b = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        y = x + self.a(x)
        z = self.b(y)
        return nn.functional.relu(z) * z


@pytest.mark.parametrize("algorithm", FORCED)
def test_epilogues_are_folded_only_where_the_graph_allows(algorithm):
    model = _Epilogues().eval()
    x = ember.randn(2, 3, 8, 8)
    compiled = ember.compile(model, conv_algorithm=algorithm)
    got = compiled(x).numpy()
    assert [k.epilogue for k in _compiled_kernels(compiled)] == [("add",), ()]  # b's result has two readers
    with ember.no_grad():
        expected = model(x).numpy()
    assert _relative(got, expected) < FLOAT32_TOLERANCE[algorithm]


@pytest.mark.parametrize("algorithm", ["auto"] + FORCED)
def test_grouped_and_dilated_convolutions_keep_the_eager_kernel(algorithm):
    for conv in (nn.Conv2d(4, 4, 3, groups=2, padding=1), nn.Conv2d(4, 4, 3, dilation=2)):
        compiled = ember.compile(conv.eval(), conv_algorithm=algorithm)
        x = ember.randn(1, 4, 7, 7)
        np.testing.assert_allclose(compiled(x).numpy(), conv(x).detach().numpy(), rtol=1e-5, atol=1e-6)
        assert _compiled_kernels(compiled) == []


@pytest.mark.parametrize("algorithm", ["auto", "winograd_4x4"])
def test_half_precision_convolutions_keep_the_eager_kernel(algorithm):
    conv = nn.Conv2d(3, 4, 3, padding=1).to(ember.float16).eval()
    x = ember.randn(1, 3, 6, 6).to(ember.float16)
    compiled = ember.compile(conv, conv_algorithm=algorithm)
    np.testing.assert_array_equal(compiled(x).numpy(), conv(x).detach().numpy())
    assert _compiled_kernels(compiled) == []


@pytest.mark.parametrize("algorithm", ["winograd_2x2", "winograd_4x4"])
def test_winograd_falls_back_to_im2col_where_it_does_not_apply(algorithm):
    for conv in (nn.Conv2d(4, 5, 3, stride=2, padding=1), nn.Conv2d(4, 5, 1), nn.Conv2d(4, 5, (3, 2))):
        compiled = ember.compile(conv.eval(), conv_algorithm=algorithm)
        x = ember.randn(2, 4, 7, 6)
        np.testing.assert_allclose(compiled(x).numpy(), conv(x).detach().numpy(), rtol=1e-5, atol=1e-6)
        assert [k.algorithm for k in _compiled_kernels(compiled)] == ["im2col"]


def test_each_shape_is_measured_once(monkeypatch):
    calls = []
    measure = conv_algorithm_module._measure

    def counting(options, x, *args, **kwargs):
        calls.append(tuple(x.shape))
        return measure(options, x, *args, **kwargs)

    monkeypatch.setattr(conv_algorithm_module, "_measure", counting)
    conv_algorithm_cache().clear()
    # the first convolution reads the caller's (N, C, H, W) batch, the next two the
    # pixel-major activations of the program: two shapes (with layouts), three convolutions
    model = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(16, 16, 3, padding=1)).eval()
    x = ember.randn(2, 16, 16, 16)  # over SMALL multiplies, so "auto" measures
    first = ember.compile(model)
    first(x)
    assert len(calls) == 2 and len(conv_algorithm_cache()) == 2
    for entry in conv_algorithm_cache().values():
        assert set(entry["seconds"]) == set(ALGORITHMS) and entry["algorithm"] in ALGORITHMS
    ember.compile(model)(x)  # a second compile measures nothing
    assert len(calls) == 2
    records = next(iter(first.conv_choices.values()))
    assert [r[2] for r in records][1] == [r[2] for r in records][2]


def test_auto_keeps_the_eager_kernel_for_tiny_convolutions():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).eval()
    compiled = ember.compile(model)
    x = ember.randn(2, 3, 8, 8)
    np.testing.assert_allclose(compiled(x).numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert _compiled_kernels(compiled) == [] and next(iter(compiled.conv_choices.values())) == []


def test_an_unknown_algorithm_is_refused_with_the_choices():
    compiled = ember.compile(nn.Conv2d(2, 2, 3).eval(), conv_algorithm="fft")
    with pytest.warns(RuntimeWarning, match="conv_algorithm must be 'auto', 'eager' or one of"):
        compiled(ember.randn(1, 2, 5, 5))


@pytest.mark.parametrize("algorithm", ["auto"] + FORCED)
def test_resnet18_compiled_equals_eager(algorithm):
    ember.manual_seed(0)
    model = ember.zoo.create_model("resnet18_cifar", num_classes=10).eval()
    x = ember.randn(2, 3, 32, 32)
    with ember.no_grad():
        expected = model(x).numpy()
    compiled = ember.compile(model, conv_algorithm=algorithm)
    got = compiled(x).numpy()
    kernels = _compiled_kernels(compiled)
    assert len(kernels) == 20  # every convolution, the stride-2 and 1x1 ones too
    if algorithm.startswith("winograd"):  # each block's residual add goes to its Winograd convolution
        adders = [k for k in kernels if "add" in k.epilogue]
        assert len(adders) == 8 and all(k.algorithm == algorithm for k in adders)
    assert _relative(got, expected) < 1e-4
