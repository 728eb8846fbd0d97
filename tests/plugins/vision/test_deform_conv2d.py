"""ember_vision.ops.deform_conv2d and DeformConv2d against a float64 reference written
from torch ops (tests/plugins/vision/deform_reference.py): values and the gradients of
input, offset, mask, weight and bias; groups, offset groups, stride, padding, dilation,
odd shapes, empty batches, offsets pointing outside the image; errors.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d.py and deform_conv2d_kernel.py
(PyTorch counterpart: torchvision/ops/deform_conv.py, torchvision 0.28).
"""

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck
from ember_vision.ops import DeformConv2d, deform_conv2d
from tests.plugins.vision import deform_reference

TOLERANCES = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-10, atol=1e-10)}

# (N, C, H, W, out channels, kh, kw, stride, padding, dilation, groups, offset groups)
CASES = {
    "plain_3x3": (2, 4, 6, 5, 6, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1),
    "odd_shapes": (3, 3, 7, 4, 5, 2, 3, (1, 1), (0, 1), (1, 1), 1, 1),
    "stride_padding_dilation": (2, 2, 9, 8, 3, 3, 2, (2, 3), (2, 1), (2, 1), 1, 1),
    "groups": (2, 6, 5, 5, 4, 3, 3, (1, 1), (1, 1), (1, 1), 2, 1),
    "offset_groups": (2, 6, 5, 6, 3, 3, 3, (1, 1), (1, 1), (1, 1), 1, 3),
    "groups_and_offset_groups": (1, 4, 6, 6, 8, 3, 1, (2, 1), (1, 0), (1, 2), 4, 2),
    "one_pixel": (2, 2, 1, 1, 3, 1, 1, (1, 1), (0, 0), (1, 1), 1, 2),
}


def make_inputs(case, dtype, use_mask, bias=True, seed=0, scale=2.0):
    """Torch float64 leaves (input, offset, weight, bias, mask) for a case, and the
    keyword arguments; the values are rounded to ``dtype`` so both sides see the same."""
    n, c, h, w, o, kh, kw, stride, padding, dilation, groups, og = case
    out_h = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    gen = torch.Generator().manual_seed(seed)

    def leaf(*shape, spread=1.0, shift=0.0):
        t = torch.randn(*shape, generator=gen, dtype=torch.float64) * spread + shift
        return t.to(getattr(torch, dtype)).double().requires_grad_()

    tensors = dict(input=leaf(n, c, h, w), offset=leaf(n, 2 * og * kh * kw, out_h, out_w, spread=scale),
                   weight=leaf(o, c // groups, kh, kw), bias=leaf(o) if bias else None,
                   mask=leaf(n, og * kh * kw, out_h, out_w, spread=0.3, shift=0.5) if use_mask else None)
    return tensors, dict(stride=stride, padding=padding, dilation=dilation)


def to_ember(t, dtype):
    return None if t is None else ember.tensor(t.detach().numpy()).to(getattr(ember, dtype)).requires_grad_()


def check_against_reference(tensors, kwargs, dtype):
    """Forward and backward on both sides with one random output gradient; compare."""
    mine = {k: to_ember(v, dtype) for k, v in tensors.items()}
    out = deform_conv2d(mine["input"], mine["offset"], mine["weight"], mine["bias"], mask=mine["mask"], **kwargs)
    expected = deform_reference.deform_conv2d(tensors["input"], tensors["offset"], tensors["weight"],
                                              tensors["bias"], mask=tensors["mask"], **kwargs)
    assert out.dtype == getattr(ember, dtype) and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **TOLERANCES[dtype])
    seed = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    out.backward(ember.tensor(seed.numpy()).to(out.dtype))
    expected.backward(seed)
    for name, t in tensors.items():
        if t is not None:
            assert mine[name].grad is not None, name
            np.testing.assert_allclose(mine[name].grad.numpy(), t.grad.numpy(), **TOLERANCES[dtype], err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients(case, use_mask, dtype):
    tensors, kwargs = make_inputs(CASES[case], dtype, use_mask)
    check_against_reference(tensors, kwargs, dtype)


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_offsets_pointing_outside_the_image(use_mask):
    # offsets of up to +-12 pixels on a 5x4 image: most samples fall partly or wholly outside
    tensors, kwargs = make_inputs(CASES["plain_3x3"], "float64", use_mask, scale=6.0)
    outside = (tensors["offset"].detach().abs() > 6).double().mean().item()
    assert outside > 0.2
    check_against_reference(tensors, kwargs, "float64")


def test_far_outside_gives_the_bias_and_zero_gradients():
    tensors, kwargs = make_inputs(CASES["plain_3x3"], "float64", True)
    mine = {k: to_ember(v, "float64") for k, v in tensors.items()}
    far = (ember.ones_like(mine["offset"]) * 50).requires_grad_()
    out = deform_conv2d(mine["input"], far, mine["weight"], mine["bias"], mask=mine["mask"], **kwargs)
    expected = np.broadcast_to(mine["bias"].detach().numpy().reshape(1, -1, 1, 1), out.shape)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    out.sum().backward()
    for t in (mine["input"], far, mine["mask"], mine["weight"]):
        assert not t.grad.numpy().any()


def test_no_bias():
    tensors, kwargs = make_inputs(CASES["groups"], "float64", True, bias=False)
    check_against_reference(tensors, kwargs, "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_offsets_are_a_plain_convolution(dtype):
    # an oracle independent of the reference: torch's own conv2d
    tensors, kwargs = make_inputs(CASES["stride_padding_dilation"], dtype, False)
    mine = {k: to_ember(v, dtype) for k, v in tensors.items()}
    zeros = ember.zeros(mine["offset"].shape, dtype=getattr(ember, dtype))
    out = deform_conv2d(mine["input"], zeros, mine["weight"], mine["bias"], **kwargs)
    expected = torch.nn.functional.conv2d(tensors["input"], tensors["weight"], tensors["bias"], **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **TOLERANCES[dtype])
    seed = torch.randn(expected.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    out.backward(ember.tensor(seed.numpy()).to(out.dtype))
    expected.backward(seed)
    for name in ("input", "weight", "bias"):
        np.testing.assert_allclose(mine[name].grad.numpy(), tensors[name].grad.numpy(), **TOLERANCES[dtype])


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_empty_batch(use_mask):
    case = (0,) + CASES["groups"][1:]
    tensors, kwargs = make_inputs(case, "float32", use_mask)
    mine = {k: to_ember(v, "float32") for k, v in tensors.items()}
    out = deform_conv2d(mine["input"], mine["offset"], mine["weight"], mine["bias"], mask=mine["mask"], **kwargs)
    assert tuple(out.shape) == (0, 4, 5, 5)
    out.sum().backward()
    assert tuple(mine["input"].grad.shape) == (0, 6, 5, 5)
    assert tuple(mine["offset"].grad.shape) == tuple(mine["offset"].shape)
    assert not mine["weight"].grad.numpy().any() and not mine["bias"].grad.numpy().any()


def test_non_contiguous_inputs():
    tensors, kwargs = make_inputs(CASES["offset_groups"], "float64", True)
    mine = {k: to_ember(v, "float64") for k, v in tensors.items()}
    # the same values through transposed (non-contiguous) views
    views = {k: v.detach().transpose(2, 3).contiguous().transpose(2, 3) if v.ndim == 4 else v
             for k, v in mine.items()}
    assert not views["input"].is_contiguous()
    out = deform_conv2d(views["input"], views["offset"], views["weight"], views["bias"], mask=views["mask"], **kwargs)
    expected = deform_conv2d(mine["input"], mine["offset"], mine["weight"], mine["bias"], mask=mine["mask"],
                             **kwargs)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_gradcheck(use_mask):
    tensors, kwargs = make_inputs((1, 4, 4, 3, 2, 2, 2, (1, 1), (1, 0), (1, 1), 2, 2), "float64", use_mask,
                                  scale=1.5)
    mine = {k: to_ember(v, "float64") for k, v in tensors.items()}

    def fn(input, offset, weight, bias, *mask):
        return deform_conv2d(input, offset, weight, bias, mask=mask[0] if mask else None, **kwargs)

    inputs = [mine[k] for k in ("input", "offset", "weight", "bias")] + ([mine["mask"]] if use_mask else [])
    assert gradcheck(fn, tuple(inputs), eps=1e-6, atol=1e-6)


def test_the_op_and_its_backward_are_registered():
    assert ember.ops.torchvision.deform_conv2d.qualname == "torchvision::deform_conv2d"
    assert ember.ops.torchvision._deform_conv2d_backward.num_outputs == 5
    schema = ember.library.schema(ember.ops.torchvision.deform_conv2d)
    assert schema.startswith("torchvision::deform_conv2d(input, weight, offset, mask, bias, *, stride_h")
    tensors, kwargs = make_inputs(CASES["plain_3x3"], "float64", False)
    mine = {k: to_ember(v, "float64") for k, v in tensors.items()}
    out = deform_conv2d(mine["input"], mine["offset"], mine["weight"], mine["bias"], **kwargs)
    assert type(out.grad_fn).__name__ == "DeformConv2dFunctionBackward"


def test_double_backward_is_not_differentiable():
    tensors, kwargs = make_inputs(CASES["plain_3x3"], "float64", False)
    mine = {k: to_ember(v, "float64") for k, v in tensors.items()}
    out = deform_conv2d(mine["input"], mine["offset"], mine["weight"], mine["bias"], **kwargs)
    (grad_input,) = ember.autograd.grad(out.sum(), [mine["input"]], create_graph=True)
    assert grad_input.grad_fn is None  # torchvision: "double backwards on deform_conv2d not supported"


@pytest.mark.parametrize("change, message", [
    (dict(offset=(2, 19, 6, 5)), "offset.shape[1] is not valid: got: 19 expected: 18"),
    (dict(offset=(2, 8, 6, 5)), "the shape of the offset tensor at dimension 1 is not valid"),
    (dict(offset=(2, 18, 5, 5)), "offset output dims: (5, 5) - computed output dims: (6, 5)"),
    (dict(offset=(3, 18, 6, 5)), "invalid batch size of offset"),
    (dict(mask=(2, 8, 6, 5)), "mask.shape[1] is not valid: got: 8 expected: 9"),
    (dict(mask=(2, 9, 6, 4)), "mask output dims: (6, 4) - computed output dims: (6, 5)"),
    (dict(weight=(6, 3, 3, 3)), "weight.shape[1] * groups must equal input.shape[1]"),
    (dict(weight=(5, 2, 3, 3)), "weight.shape[0] must be divisible by groups"),
    (dict(input=(2, 4, 6)), "input must be a 4-d tensor, got 3 dimensions"),
])
def test_errors(change, message):
    shapes = dict(input=(2, 4, 6, 5), offset=(2, 18, 6, 5), weight=(6, 4, 3, 3), mask=(2, 9, 6, 5))
    shapes.update(change)
    t = {k: ember.zeros(v) for k, v in shapes.items()}
    with pytest.raises(RuntimeError) as error:
        deform_conv2d(t["input"], t["offset"], t["weight"], padding=1, mask=t["mask"])
    assert message in str(error.value)


def test_too_small_an_output_and_bad_geometry():
    x, w = ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 3, 3)
    with pytest.raises(RuntimeError, match="Calculated output size too small - out_h: 0 out_w: 0"):
        ember.ops.torchvision.deform_conv2d(x, w, ember.zeros(1, 18, 0, 0), None, None, stride_h=1, stride_w=1,
                                            pad_h=0, pad_w=0, dilation_h=1, dilation_w=1, groups=1, offset_groups=1,
                                            use_mask=False)
    with pytest.raises(RuntimeError, match="stride_h: 0 stride_w: 1"):
        deform_conv2d(x, ember.zeros(1, 18, 1, 1), w, padding=1, stride=(0, 1))
    with pytest.raises(RuntimeError, match="expected weight to have the input's dtype"):
        deform_conv2d(x, ember.zeros(1, 18, 2, 2), w.double(), padding=1)


def test_module_matches_torchs_conv2d_initialisation_and_the_function():
    # torchvision's reset_parameters is Conv2d's: the same seed gives the same parameters
    ember.manual_seed(3)
    torch.manual_seed(3)
    layer = DeformConv2d(6, 4, (3, 2), stride=2, padding=(1, 0), dilation=1, groups=2)
    conv = torch.nn.Conv2d(6, 4, (3, 2), stride=2, padding=(1, 0), groups=2)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), conv.weight.detach().numpy())
    np.testing.assert_array_equal(layer.bias.detach().numpy(), conv.bias.detach().numpy())
    assert repr(layer) == "DeformConv2d(6, 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 0), groups=2)"
    assert repr(DeformConv2d(2, 2, 1, dilation=2, bias=False)) == \
        "DeformConv2d(2, 2, kernel_size=(1, 1), stride=(1, 1), dilation=(2, 2), bias=False)"
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    x, offset = ember.randn(2, 6, 7, 5), ember.randn(2, 12, 4, 2)
    np.testing.assert_array_equal(layer(x, offset).detach().numpy(),
                                  deform_conv2d(x, offset, layer.weight, layer.bias, stride=2,
                                                padding=(1, 0)).detach().numpy())
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        DeformConv2d(5, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        DeformConv2d(4, 5, 3, groups=2)
