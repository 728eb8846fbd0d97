"""Tests for ember_zoo_resnet/attention/ (SE, CBAM, ECA, coordinate attention) and the
attention ResNets of attention_cifar.py, against the same modules written with torch ops
(torch_attention.py): the same weights in both, values and gradients in float32 and
float64, train and eval mode; the attention maps against the same maps computed in torch;
an ember checkpoint loaded into the torch model."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ember_zoo_resnet import ATTENTION_MODELS, attention_cifar
from ember_zoo_resnet.attention import (
    CBAM,
    CoordinateAttention,
    EfficientChannelAttention,
    SqueezeExcitation,
    eca_kernel_size,
)
from torch_attention import TorchCBAM, TorchCoordAtt, TorchECA, TorchSqueezeExcitation, torch_attention_resnet8
from torch_reference import randomize_norms

import ember

ATTENTIONS = ["se", "cbam", "eca", "ca"]
TOLERANCE = {torch.float32: 2e-5, torch.float64: 1e-10}


@pytest.fixture(autouse=True)
def seeded_torch():
    torch.manual_seed(0)


def randomized(torch_module, seed=0):
    """``torch_module`` with random norms (weights, biases, running statistics), so that
    eval mode and CBAM's zero-started spatial norm are exercised too."""
    generator = torch.Generator().manual_seed(seed)
    randomize_norms(torch_module, generator)
    return torch_module


def ember_copy(ember_module, torch_module):
    state = {key: ember.from_numpy(value.detach().numpy().copy()) for key, value in torch_module.state_dict().items()}
    result = ember_module.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    return ember_module


def assert_same_values_and_gradients(ember_module, torch_module, shape, dtype, train):
    """The same input to both: outputs, the input's gradient, every parameter's gradient and,
    in train mode, the norms' running statistics."""
    tolerance = TOLERANCE[dtype]
    torch_module.to(dtype).train(train)
    ember_module.to(getattr(ember, str(dtype).split(".")[1])).train(train)
    x_np = torch.randn(shape, generator=torch.Generator().manual_seed(1), dtype=dtype).numpy()
    x_t = torch.tensor(x_np, requires_grad=True)
    x_e = ember.tensor(x_np, requires_grad=True)
    out_t, out_e = torch_module(x_t), ember_module(x_e)
    assert out_e.dtype == getattr(ember, str(dtype).split(".")[1])
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=tolerance, atol=tolerance)
    weights = torch.randn(out_t.shape, generator=torch.Generator().manual_seed(2), dtype=dtype)
    (out_t * weights).sum().backward()
    (out_e * ember.from_numpy(weights.numpy())).sum().backward()
    np.testing.assert_allclose(x_e.grad.numpy(), x_t.grad.numpy(), rtol=tolerance, atol=tolerance, err_msg="input")
    torch_parameters = dict(torch_module.named_parameters())
    names = [name for name, _ in ember_module.named_parameters()]
    assert names == list(torch_parameters)
    for name, parameter in ember_module.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), torch_parameters[name].grad.numpy(), rtol=tolerance,
                                   atol=tolerance, err_msg=name)
    torch_buffers = dict(torch_module.named_buffers())
    for name, buffer in ember_module.named_buffers():
        np.testing.assert_allclose(buffer.numpy(), torch_buffers[name].numpy(), rtol=tolerance, atol=tolerance,
                                   err_msg=name)


MODULES = {
    "se": (lambda: SqueezeExcitation(16, 4), lambda: TorchSqueezeExcitation(16, 4)),
    "cbam": (lambda: CBAM(16, reduction_ratio=4), lambda: TorchCBAM(16, 4)),
    "eca": (lambda: EfficientChannelAttention(16), lambda: TorchECA(3)),
    "eca-k5": (lambda: EfficientChannelAttention(16, kernel_size=5), lambda: TorchECA(5)),
    "ca": (lambda: CoordinateAttention(16, 16), lambda: TorchCoordAtt(16, 16)),
}


# --- the modules --------------------------------------------------------------------

@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_module_matches_torch(name, dtype, train):
    build_ember, build_torch = MODULES[name]
    reference = randomized(build_torch())
    module = ember_copy(build_ember(), reference)
    # (an odd, non-square map: rows and columns must not be swapped anywhere)
    assert_same_values_and_gradients(module, reference, (3, 16, 5, 7), dtype, train)


@pytest.mark.parametrize("name", MODULES)
def test_module_matches_torch_on_a_non_contiguous_input(name):
    build_ember, build_torch = MODULES[name]
    reference = randomized(build_torch()).double().eval()
    module = ember_copy(build_ember(), reference).double().eval()
    x_np = np.random.default_rng(0).standard_normal((2, 6, 16, 5))
    out_t = reference(torch.from_numpy(x_np).permute(0, 2, 3, 1))  # (2, 16, 5, 6), not contiguous
    out_e = module(ember.from_numpy(x_np).permute(0, 2, 3, 1))
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["se", "cbam", "eca", "ca"])
def test_module_keeps_an_empty_batch_empty(name):
    module = MODULES[name][0]().eval()
    assert module(ember.zeros(0, 16, 4, 4)).shape == (0, 16, 4, 4)


@pytest.mark.parametrize("channels, expected_rule", [(c, c) for c in (1, 2, 8, 16, 32, 64, 100, 256, 512, 2048)])
def test_eca_kernel_size_is_the_papers_nearest_odd(channels, expected_rule):
    # psi(C) = |log2(C) / gamma + b / gamma|_odd with gamma = 2, b = 1, computed here with
    # the paper's rounding written out: truncate, then the next odd integer if even.
    value = int(abs(np.log2(expected_rule) / 2 + 1 / 2))
    odd = value if value % 2 else value + 1
    assert eca_kernel_size(channels) == odd
    assert EfficientChannelAttention(channels).conv.weight.shape == (1, 1, odd)


def test_module_errors_are_one_line_messages():
    with pytest.raises(ValueError, match="kernel_size must be odd and positive.*got 4"):
        EfficientChannelAttention(16, kernel_size=4)
    with pytest.raises(ValueError, match="reduction_ratio \\(32\\) leaves no hidden unit for 16 channels"):
        CBAM(16, reduction_ratio=32)
    with pytest.raises(ValueError, match="attention must be one of se, cbam, eca, ca, but got 'bam'"):
        attention_cifar.AttentionCifarResNet("bam")


# --- the models -----------------------------------------------------------------------

@pytest.mark.parametrize("attention", ATTENTIONS)
def test_model_names_shapes_and_sizes_are_the_torch_models(attention):
    model = getattr(attention_cifar, f"{attention}_resnet8_cifar")(in_channels=1, num_classes=10)
    reference = torch_attention_resnet8(attention)
    assert [(k, tuple(v.shape)) for k, v in model.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in reference.state_dict().items()]
    assert any(key.startswith(f"layer1.0.{attention}.") for key in model.state_dict())
    registered = ATTENTION_MODELS[f"{attention}_resnet8_cifar"][0]
    built = getattr(attention_cifar, f"{attention}_resnet8_cifar")()  # 3 channels, 10 classes
    assert sum(p.numel() for p in built.parameters()) == registered
    assert ember.zoo.model_info(f"{attention}_resnet8_cifar").num_params == registered


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_model_matches_torch(attention, train):
    reference = randomized(torch_attention_resnet8(attention))
    model = ember_copy(getattr(attention_cifar, f"{attention}_resnet8_cifar")(in_channels=1), reference)
    assert_same_values_and_gradients(model, reference, (4, 1, 8, 8), torch.float64, train)


def test_cbam_spatial_gates_start_uniform():
    # The CBAM reference starts each spatial gate's norm at weight 0: every map is 0.5.
    model = attention_cifar.cbam_resnet8_cifar(in_channels=1).eval()
    gate = model.layer2[0].cbam.SpatialGate
    assert gate.spatial.bn.weight.abs().max().item() == 0
    x = ember.randn(2, 32, 4, 4)
    assert ember.allclose(gate.attention_map(x), ember.full((2, 1, 4, 4), 0.5))


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_an_ember_checkpoint_loads_into_the_torch_model_with_the_same_logits(attention, tmp_path):
    model = getattr(attention_cifar, f"{attention}_resnet8_cifar")(in_channels=1)
    ember_copy(model, randomized(torch_attention_resnet8(attention), seed=3))  # non-trivial norms and gates
    model.eval()
    path = tmp_path / f"{attention}.pt"
    ember.save(model.state_dict(), path)
    reference = torch_attention_resnet8(attention)
    reference.load_state_dict(torch.load(path, weights_only=True))  # strict: every key, every shape
    reference.eval()
    x = np.random.default_rng(0).random((3, 1, 8, 8), dtype=np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(ember.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-5)


# --- the attention maps -------------------------------------------------------------------

def torch_block_maps(reference, attention, x):
    """Each block's map as ember_zoo_resnet/explain.py defines it, computed in torch."""
    blocks = [reference.layer1[0], reference.layer2[0], reference.layer3[0]]
    caught = []
    if attention in ("cbam", "ca"):
        gates = [getattr(b, attention).SpatialGate if attention == "cbam" else getattr(b, attention) for b in blocks]
        handles = [g.register_forward_pre_hook(lambda m, args: caught.append(args[0])) for g in gates]
        with torch.no_grad():
            reference(x)
            if attention == "cbam":
                maps = [g.attention_map(c) for g, c in zip(gates, caught)]
            else:
                maps = [(a_h * a_w).mean(1, keepdim=True) for a_h, a_w in (g.attention_maps(c)
                                                                            for g, c in zip(gates, caught))]
    else:
        handles = [b.register_forward_hook(lambda m, args, out: caught.append(out)) for b in blocks]
        logits = reference(x)
        score = logits.gather(1, logits.argmax(1, keepdim=True)).sum()
        grads = torch.autograd.grad(score, caught)
        maps = [torch.relu((g.mean((2, 3), keepdim=True) * a).sum(1, keepdim=True)) for a, g in zip(caught, grads)]
    for handle in handles:
        handle.remove()
    resized = torch.stack([F.interpolate(m, size=x.shape[-2:], mode="bilinear", align_corners=False)
                           for m in maps]).mean(0)
    low = resized.amin((1, 2, 3), keepdim=True)
    return ((resized - low) / (resized.amax((1, 2, 3), keepdim=True) - low)).detach().numpy()


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_attention_maps_are_the_maps_computed_in_torch(attention):
    reference = randomized(torch_attention_resnet8(attention)).double().eval()
    model = ember_copy(getattr(attention_cifar, f"{attention}_resnet8_cifar")(in_channels=1), reference)
    model.double().eval()
    x = np.random.default_rng(0).random((3, 1, 8, 8))
    maps, how = model.attention_maps(ember.from_numpy(x))
    assert maps.shape == (3, 1, 8, 8) and maps.requires_grad is False
    np.testing.assert_allclose(maps.numpy(), torch_block_maps(reference, attention, torch.from_numpy(x)),
                               rtol=1e-9, atol=1e-9)
    assert ("Grad-CAM" in how) == (attention in ("se", "eca"))
    assert all(p.grad is None for p in model.parameters())  # Grad-CAM leaves .grad alone
