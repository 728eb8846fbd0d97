"""roi_align / RoIAlign (torchvision::roi_align and its backward op) against a float64
reference built on torch's grid_sample: each roi's sample grid read with
align_corners=True and border padding, samples outside [-1, size] zeroed, bins averaged.
Values and input gradients (torch autograd through the reference), gradcheck and
gradgradcheck, aligned, adaptive and fixed sampling_ratio, spatial_scale, boxes as a
(K, 5) tensor or a list, boxes outside the image, empty rois, odd shapes, errors."""

import numpy as np
import pytest
import torch
from vision_reference import random_rois, torch_roi_align

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember_vision import ops

CASES = [  # (output_size, spatial_scale, sampling_ratio, aligned)
    ((3, 3), 1.0, -1, False),
    ((2, 4), 0.5, 2, True),
    ((5, 1), 0.25, 0, False),
    (2, 1.0, 3, True),
    ((1, 1), 1.0, -1, True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_and_input_gradients(case, dtype):
    output_size, scale, ratio, aligned = case
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 9))
    rois = random_rois(rng, 6, 2, 7 / scale, 9 / scale)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    got = ops.roi_align(ex, ember.tensor(rois, dtype=getattr(ember, dtype)), output_size, scale, ratio, aligned)
    tx = torch.tensor(x, requires_grad=True)
    pair = (output_size, output_size) if isinstance(output_size, int) else output_size
    expected = torch_roi_align(tx, torch.tensor(rois), pair, scale, ratio, aligned)
    assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == tuple(expected.shape)
    tol = 2e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    weights = rng.normal(size=tuple(expected.shape))
    (got * ember.tensor(weights, dtype=got.dtype)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_boxes_as_a_list_per_image_and_the_module():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.normal(size=(3, 2, 6, 5)))
    per_image = [ember.tensor(random_rois(rng, k, 1, 6, 5)[:, 1:]) for k in (2, 0, 3)]
    rois = ember.cat([ember.cat([ember.full((len(b), 1), float(i), dtype=ember.float64), b], 1)
                      for i, b in enumerate(per_image)])
    expected = ops.roi_align(x, rois, (2, 3), 0.5, 2, True)
    np.testing.assert_array_equal(ops.roi_align(x, per_image, (2, 3), 0.5, 2, True).numpy(), expected.numpy())
    module = ops.RoIAlign((2, 3), spatial_scale=0.5, sampling_ratio=2, aligned=True)
    np.testing.assert_array_equal(module(x, per_image).numpy(), expected.numpy())
    assert repr(module) == "RoIAlign(output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, aligned=True)"


def test_gradcheck_and_double_backward():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.normal(size=(2, 2, 5, 6)), requires_grad=True)
    rois = ember.tensor(random_rois(rng, 4, 2, 5, 6))
    for aligned in (False, True):
        assert gradcheck(lambda t: ops.roi_align(t, rois, (2, 2), 1.0, -1, aligned), (x,))
        assert gradgradcheck(lambda t: ops.roi_align(t, rois, (2, 2), 1.0, -1, aligned), (x,))


def test_through_the_registry_and_the_backward_node():
    x = ember.randn(1, 2, 4, 4, dtype=ember.float64, requires_grad=True)
    rois = ember.tensor([[0.0, 0.5, 0.5, 3.0, 2.5]], dtype=ember.float64)
    out = ember.ops.torchvision.roi_align(x, rois, spatial_scale=1.0, pooled_height=2, pooled_width=2,
                                          sampling_ratio=-1, aligned=False)
    assert type(out.grad_fn).__name__ == "RoiAlignBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), ops.roi_align(x, rois, 2).detach().numpy())


def test_empty_rois_and_empty_channels():
    x = ember.randn(2, 3, 5, 5, requires_grad=True)
    out = ops.roi_align(x, ember.zeros(0, 5), (2, 2))
    assert tuple(out.shape) == (0, 3, 2, 2)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3, 5, 5), np.float32))
    assert tuple(ops.roi_align(ember.zeros(1, 0, 5, 5), ember.tensor([[0.0, 0, 0, 2, 2]]), 3).shape) == (1, 0, 3, 3)
    assert tuple(ops.roi_align(x, [ember.zeros(0, 4), ember.zeros(0, 4)], 2).shape) == (0, 3, 2, 2)


def test_a_roi_far_outside_reads_zeros_and_a_reversed_aligned_roi_is_empty():
    x = ember.ones(1, 1, 4, 4)
    far = ops.roi_align(x, ember.tensor([[0.0, 10.0, 10.0, 14.0, 14.0]]), 2, sampling_ratio=2)
    np.testing.assert_array_equal(far.numpy(), np.zeros((1, 1, 2, 2), np.float32))
    reversed_box = ops.roi_align(x, ember.tensor([[0.0, 3.0, 3.0, 1.0, 1.0]]), 2, aligned=True)
    np.testing.assert_array_equal(reversed_box.numpy(), np.zeros((1, 1, 2, 2), np.float32))
    border = ops.roi_align(x, ember.tensor([[0.0, -0.9, -0.9, 4.0, 4.0]]), 1, sampling_ratio=1)
    np.testing.assert_allclose(border.numpy(), [[[[1.0]]]])  # clamped reads, not zeros


def test_errors_as_torchvision():
    x = ember.randn(1, 1, 4, 4)
    with pytest.raises(AssertionError, match=r"not correct as Tensor\[K, 5\]"):
        ops.roi_align(x, ember.zeros(2, 4), 2)
    with pytest.raises(AssertionError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_align(x, [ember.zeros(2, 5)], 2)
    with pytest.raises(AssertionError, match="boxes is expected to be a Tensor"):
        ops.roi_align(x, np.zeros((2, 5)), 2)
    with pytest.raises(RuntimeError, match="input should have the same type as rois"):
        ops.roi_align(x, ember.zeros(2, 5, dtype=ember.float64), 2)
