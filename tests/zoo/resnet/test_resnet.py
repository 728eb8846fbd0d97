"""Tests for ember_zoo_resnet/resnet.py and cifar.py against a torch.nn oracle with
torchvision's names (torch_reference.py): keys, shapes, parameter counts, logits and
gradients from the same weights."""

import numpy as np
import pytest
import torch
from ember_zoo_resnet import cifar, resnet
from torch_reference import TorchBasicBlock, TorchBottleneck, TorchResNet, randomize_norms

import ember


@pytest.fixture(autouse=True)
def seeded_torch():
    """torch.nn initialises the reference models from the global generator: seed it, so a
    test does not depend on which tests ran before it in the same process."""
    torch.manual_seed(0)


def ember_state(torch_model):
    return {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in torch_model.state_dict().items()}


def count(model):
    return sum(p.numel() for p in model.parameters())


def assert_close_to_scale(actual, desired, tolerance, name):
    """Gradients of a deep float32 network differ from torch's by float32 rounding relative to
    their largest entry (torch float32 vs torch float64 differ by about 1e-5 of the maximum
    for resnet18 in train mode; ember by the same), so the tolerance scales with the maximum."""
    scale = max(1.0, float(np.abs(desired).max()))
    np.testing.assert_allclose(actual, desired, rtol=tolerance, atol=tolerance * scale, err_msg=name)


def compare(ember_model, torch_model, shape, seed=0, train=True, rtol=1e-4, atol=1e-4):
    """Same weights in both; same input; logits, input gradient and every parameter gradient."""
    generator = torch.Generator().manual_seed(seed)
    randomize_norms(torch_model, generator)
    result = ember_model.load_state_dict(ember_state(torch_model))
    assert not result.missing_keys and not result.unexpected_keys
    # Both sides run in float64 on the same weights and input. Batch norm in train mode
    # over a few samples is ill-conditioned: for some weights a float32 input gradient
    # (torch's or ember's) moves by several % of its scale from the exact answer, so
    # float32 on both sides would compare two roundings, not the two implementations.
    torch_model.double()
    ember_model.double()
    ember_model.train(train)
    torch_model.train(train)
    x_np = torch.randn(shape, generator=generator, dtype=torch.float64).numpy()
    x_t = torch.tensor(x_np, requires_grad=True)
    x_e = ember.tensor(x_np, requires_grad=True)
    out_t, out_e = torch_model(x_t), ember_model(x_e)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=rtol, atol=atol)
    weights = torch.randn(out_t.shape, generator=generator, dtype=torch.float64)
    (out_t * weights).sum().backward()
    (out_e * ember.from_numpy(weights.numpy())).sum().backward()
    assert_close_to_scale(x_e.grad.numpy(), x_t.grad.numpy(), atol, "input")
    torch_params = dict(torch_model.named_parameters())
    for name, p in ember_model.named_parameters():
        assert_close_to_scale(p.grad.numpy(), torch_params[name].grad.numpy(), atol, name)
    if train:  # the running statistics moved the same way
        torch_buffers = dict(torch_model.named_buffers())
        for name, b in ember_model.named_buffers():
            np.testing.assert_allclose(b.numpy(), torch_buffers[name].numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


# --- names, shapes and sizes --------------------------------------------------------

@pytest.mark.parametrize("name, block, layers, keys, params", [
    ("resnet18", TorchBasicBlock, [2, 2, 2, 2], 122, 11_689_512),
    ("resnet50", TorchBottleneck, [3, 4, 6, 3], 320, 25_557_032),
])
def test_state_dict_keys_and_shapes_are_torchvisions(name, block, layers, keys, params):
    model = getattr(resnet, name)()
    reference = TorchResNet(block, layers)
    ours = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert list(ours) == list(theirs)
    assert ours == theirs
    assert len(ours) == keys and count(model) == count(reference) == params
    assert model.state_dict()["layer1.0.bn1.num_batches_tracked"].dtype == ember.int64
    assert model.fc.weight.shape == (1000, 512 * block.expansion)


@pytest.mark.slow  # builds two 25-69M parameter models on each side
def test_resnext_and_wide_resnet_match_the_reference_layout():
    for name, groups, width in [("resnext50_32x4d", 32, 4), ("wide_resnet50_2", 1, 128)]:
        model = getattr(resnet, name)()
        reference = TorchResNet(TorchBottleneck, [3, 4, 6, 3], groups=groups, width_per_group=width)
        assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == \
               {k: tuple(v.shape) for k, v in reference.state_dict().items()}, name


@pytest.mark.slow  # builds every registered model, up to 127M parameters
def test_registered_parameter_counts_match_the_built_models():
    for name in ember.zoo.list_models("*"):
        info = ember.zoo.model_info(name)
        if info.plugin != "resnet":
            continue
        assert info.num_params == count(ember.zoo.create_model(name)), name
        assert info.task == "classification" and info.input_size is not None


def test_cifar_resnets_have_6n_plus_2_layers_and_torchvision_names():
    model = cifar.resnet20_cifar()
    reference = TorchResNet(TorchBasicBlock, [3, 3, 3], num_classes=10, stem="cifar", stages=(16, 32, 64))
    assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == \
           {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert count(model) == 272_474  # He et al. 2016 table 6: 0.27M
    assert "layer2.0.downsample.0.weight" in model.state_dict() and not hasattr(model, "layer4")
    convs = [m for m in model.modules() if isinstance(m, ember.nn.Conv2d) and m.kernel_size == (3, 3)]
    assert len(convs) + 1 == 20  # 19 3x3 convolutions and the fc layer
    with pytest.raises(ValueError, match="6n\\+2"):
        cifar.CifarResNet(depth=21)


def test_community_cifar_keys_are_renamed():
    renamed = cifar.remap_community_keys({"linear.weight": 1, "layer2.0.shortcut.0.weight": 2, "conv1.weight": 3})
    assert renamed == {"fc.weight": 1, "layer2.0.downsample.0.weight": 2, "conv1.weight": 3}


def test_zero_init_residual_zeroes_the_last_norm_of_every_block():
    model = resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], zero_init_residual=True)
    assert all(float(abs(m.bn3.weight).sum()) == 0 for m in model.modules() if isinstance(m, resnet.Bottleneck))
    assert float(model.layer1[0].bn2.weight.sum()) == model.layer1[0].bn2.weight.numel()
    small = resnet.resnet18(zero_init_residual=True)
    assert all(float(abs(m.bn2.weight).sum()) == 0 for m in small.modules() if isinstance(m, resnet.BasicBlock))


def test_initialisation_is_he_normal_fan_out():
    model = resnet.resnet18()
    w = model.layer3[0].conv2.weight.detach().numpy()  # fan_out = 256 * 9
    assert abs(w.std() - np.sqrt(2.0 / (256 * 9))) < 0.05 * np.sqrt(2.0 / (256 * 9))
    assert float(model.bn1.weight.sum()) == 64 and float(abs(model.bn1.bias).sum()) == 0


def test_errors_like_torchvision():
    with pytest.raises(ValueError, match="BasicBlock only supports groups=1 and base_width=64"):
        resnet.ResNet(resnet.BasicBlock, [1, 1, 1, 1], groups=2)
    with pytest.raises(NotImplementedError, match="Dilation > 1"):
        resnet.ResNet(resnet.BasicBlock, [1, 1, 1, 1], replace_stride_with_dilation=[False, True, True])
    with pytest.raises(ValueError, match="3-element tuple"):
        resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[True])


# --- outputs and gradients from the same weights ------------------------------------

@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_resnet18_logits_and_gradients_match_torch(train):
    compare(resnet.resnet18(), TorchResNet(TorchBasicBlock, [2, 2, 2, 2]), (2, 3, 64, 64), train=train)


def test_bottleneck_resnext_logits_and_gradients_match_torch():
    model = resnet.ResNet(resnet.Bottleneck, [2, 1, 1, 1], groups=4, width_per_group=8, num_classes=7)
    reference = TorchResNet(TorchBottleneck, [2, 1, 1, 1], groups=4, width_per_group=8, num_classes=7)
    compare(model, reference, (2, 3, 48, 48), seed=1)


def test_dilated_bottleneck_keeps_the_resolution():
    model = resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], replace_stride_with_dilation=[False, True, True])
    features = model.layer4(model.layer3(model.layer2(model.layer1(model.maxpool(model.conv1(
        ember.zeros(1, 3, 64, 64)))))))
    assert features.shape == (1, 2048, 8, 8)  # stride 8 instead of 32


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_cifar_resnet8_on_one_channel_8x8_matches_torch(train):
    model = cifar.resnet8_cifar(in_channels=1, num_classes=10)
    reference = TorchResNet(TorchBasicBlock, [1, 1, 1], num_classes=10, in_channels=1, stem="cifar",
                            stages=(16, 32, 64))
    compare(model, reference, (4, 1, 8, 8), seed=2, train=train)


def test_resnet18_cifar_small_input_stem_matches_torch():
    model = resnet.resnet18_cifar()
    reference = TorchResNet(TorchBasicBlock, [2, 2, 2, 2], num_classes=10, stem="small")
    compare(model, reference, (2, 3, 16, 16), seed=3)


def test_a_torch_checkpoint_loads_through_create_model(tmp_path):
    reference = TorchResNet(TorchBasicBlock, [2, 2, 2, 2], num_classes=5)
    randomize_norms(reference, torch.Generator().manual_seed(4))
    torch.save(reference.state_dict(), tmp_path / "resnet18.pth")
    model = ember.zoo.create_model("resnet18", pretrained=str(tmp_path / "resnet18.pth"), num_classes=5).eval()
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(5))
    np.testing.assert_allclose(model(ember.from_numpy(x.numpy())).detach().numpy(),
                               reference.eval()(x).detach().numpy(), rtol=1e-4, atol=1e-5)
