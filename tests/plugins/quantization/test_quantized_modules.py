"""Tests for ember_quantization.nn.quantized against torch.ao.nn.quantized on the same integers.

Outputs are compared in quantization steps of the output scale: ember's accumulator is
exact; the float requantisation may put a value one step from fbgemm's.
"""

import ember_quantization as eq
import numpy as np
import pytest
import torch
import torch.ao.nn.intrinsic.quantized as tnniq
import torch.ao.nn.quantized as tnnq
from ember_quantization.nn import quantized as nnq
from quantization_parity import DTYPES, from_torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
torch.backends.quantized.engine = "x86"


def torch_input(shape, scale=0.05, zero_point=64, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32") * 2
    return torch.quantize_per_tensor(torch.tensor(x), scale, zero_point, torch.quint8)


def torch_weight(shape, per_channel, seed=1):
    w = torch.tensor(np.random.default_rng(seed).standard_normal(shape).astype("float32") * 0.3)
    if per_channel:
        scales = w.abs().flatten(1).amax(1).double() / 127
        return torch.quantize_per_channel(w, scales, torch.zeros(shape[0], dtype=torch.long), 0, torch.qint8)
    return torch.quantize_per_tensor(w, float(w.abs().max()) / 127, 0, torch.qint8)


def assert_within_one_step(ours, theirs, exact_fraction=0.9):
    assert ours.q_scale() == pytest.approx(theirs.q_scale()) and ours.q_zero_point() == theirs.q_zero_point()
    steps = np.abs(ours.int_repr().numpy().astype(int) - theirs.int_repr().numpy().astype(int))
    assert ours.shape == theirs.shape
    assert steps.max(initial=0) <= 1, f"{steps.max()} steps apart"
    assert steps.size == 0 or (steps == 0).mean() >= exact_fraction  # almost all exactly equal


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape", [(7, 16), (2, 3, 40), (0, 16)])
def test_quantized_linear_matches_torch(per_channel, relu, shape):
    out_features = 9
    theirs = (tnniq.LinearReLU if relu else tnnq.Linear)(shape[-1], out_features)
    theirs.set_weight_bias(torch_weight((out_features, shape[-1]), per_channel),
                           torch.linspace(-1, 1, out_features))
    theirs.scale, theirs.zero_point = 0.07, 60
    ours = nnq.Linear(shape[-1], out_features)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    ours._relu = relu
    x = torch_input(shape)
    assert_within_one_step(ours(from_torch(x)), theirs(x))


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2), (1, 1, 1, 4)])
def test_quantized_conv2d_matches_torch(per_channel, stride, padding, dilation, groups):
    theirs = tnnq.Conv2d(8, 12, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    theirs.set_weight_bias(torch_weight((12, 8 // groups, 3, 3), per_channel), torch.linspace(-0.5, 0.5, 12))
    theirs.scale, theirs.zero_point = 0.1, 70
    ours = nnq.Conv2d(8, 12, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    x = torch_input((2, 8, 9, 10))
    assert_within_one_step(ours(from_torch(x)), theirs(x))


def test_quantized_relu_keeps_qparams_and_clamps_at_the_zero_point():
    x = torch_input((3, 5))
    ours = nnq.ReLU()(from_torch(x))
    theirs = torch.relu(x)
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


@pytest.fixture
def one_torch_thread():
    """torch's qadd splits its elements between its vector and scalar loops per thread's
    chunk (NOTE [ torch's quantized add, bit for bit ]); the parity is for one chunk."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("operation", ["add", "add_relu", "cat"])
@pytest.mark.parametrize("size", [5, 63, 64, 65, 200, 1000])  # on both sides of torch's 64-element blocks
@pytest.mark.parametrize("scales", [(0.05, 0.03, 0.08), (0.05, 0.05, 0.1), (0.02, 0.1, 0.04), (0.0123, 0.0123, 0.0123)])
def test_qfunctional_matches_torch_bit_for_bit(operation, size, scales, one_torch_thread):
    a_scale, b_scale, out_scale = scales  # out = 2 x in: every odd sum is a half-way case
    rng = np.random.default_rng(size)
    a, b = (torch._make_per_tensor_quantized_tensor(torch.tensor(rng.integers(0, 256, size, dtype=np.uint8)), s, z)
            for s, z in ((a_scale, 64), (b_scale, 100)))
    theirs, ours = tnnq.QFunctional(), nnq.QFunctional()
    theirs.scale, theirs.zero_point = out_scale, 90
    ours.scale, ours.zero_point = out_scale, 90
    args = ([a, b],) if operation == "cat" else (a, b)
    our_args = ([from_torch(a), from_torch(b)],) if operation == "cat" else (from_torch(a), from_torch(b))
    ours, theirs = getattr(ours, operation)(*our_args), getattr(theirs, operation)(*args)
    assert (ours.q_scale(), ours.q_zero_point()) == (theirs.q_scale(), theirs.q_zero_point())
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())


def test_qfunctional_cat_of_inputs_already_in_the_output_qparams_keeps_the_integers(one_torch_thread):
    a = torch.quantize_per_tensor(torch.linspace(-3, 3, 11), 0.05, 64, torch.quint8)
    ours, theirs = nnq.QFunctional(), tnnq.QFunctional()
    ours.scale, ours.zero_point = theirs.scale, theirs.zero_point = 0.05, 64
    np.testing.assert_array_equal(ours.cat([from_torch(a), from_torch(a)]).int_repr().numpy(),
                                  theirs.cat([a, a]).int_repr().numpy())


def test_quantize_and_dequantize_modules():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    theirs = tnnq.Quantize(0.04, 30, torch.quint8)(torch.tensor(x))
    ours = nnq.Quantize(0.04, 30, eq.quint8)(ember.tensor(x))
    np.testing.assert_array_equal(ours.int_repr().numpy(), theirs.int_repr().numpy())
    np.testing.assert_array_equal(nnq.DeQuantize()(ours).numpy(), theirs.dequantize().numpy())


def test_a_float_input_to_a_quantized_module_is_named_as_the_problem():
    with pytest.raises(RuntimeError, match="expects a quantized input"):
        nnq.Linear(3, 2)(ember.ones(1, 3))


def test_the_quantized_ops_are_ember_ops_in_their_namespace():
    from ember.library import schema

    assert ember.ops.quantized.linear is eq.kernels.linear
    assert schema(ember.ops.quantized.conv2d).startswith("quantized::conv2d(x, packed, w_scales")


def test_int_matmul_is_exact_where_float32_alone_would_round():
    from ember_quantization.kernels import int_matmul

    rng = np.random.default_rng(0)
    a = rng.integers(-255, 256, (3, 4000)).astype(np.int32)  # K * 255 * 255 far above 2**24
    b = rng.integers(-255, 256, (4000, 2)).astype(np.int32)
    np.testing.assert_array_equal(int_matmul(np, a, b), a.astype(np.int64) @ b.astype(np.int64))


def test_dtypes_map_torchs():
    assert {str(k).split(".")[-1] for k in DTYPES} == {v.name for v in DTYPES.values()}


@pytest.mark.parametrize("module", ["linear", "conv2d", "dynamic linear"])
def test_the_weight_is_packed_once_and_again_when_a_new_weight_is_loaded(module, monkeypatch):
    from ember_quantization import kernels

    packings = []
    pack = kernels.pack_weight
    monkeypatch.setattr(kernels, "pack_weight", lambda *a, **k: packings.append(1) or pack(*a, **k))
    if module == "conv2d":
        theirs, ours, x = tnnq.Conv2d(4, 6, 3), nnq.Conv2d(4, 6, 3), torch_input((1, 4, 5, 5))
        weights = [torch_weight((6, 4, 3, 3), True, seed) for seed in (1, 2)]
    else:
        dynamic = module == "dynamic linear"
        theirs = tnnq.dynamic.Linear(8, 5) if dynamic else tnnq.Linear(8, 5)
        ours = nnq.dynamic.Linear(8, 5) if dynamic else nnq.Linear(8, 5)
        x = torch_input((3, 8)).dequantize() if dynamic else torch_input((3, 8))
        weights = [torch_weight((5, 8), True, seed) for seed in (1, 2)]
    for weight in weights:  # a second weight set after forward must not reuse the first one's packing
        theirs.set_weight_bias(weight, torch.linspace(-1, 1, weight.shape[0]))
        ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
        for _ in range(2):
            out = ours(from_torch(x) if module != "dynamic linear" else ember.tensor(x.numpy()))
        if module == "dynamic linear":
            np.testing.assert_allclose(out.numpy(), theirs(x).numpy(), atol=1e-5)
        else:
            assert_within_one_step(out, theirs(x))
    assert len(packings) == 2  # once per weight, not per call
