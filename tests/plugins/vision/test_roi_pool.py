"""roi_pool, ps_roi_align and ps_roi_pool (torchvision::roi_pool, ps_roi_align, ps_roi_pool
and their backward ops) against float64 torch references (vision_reference.py): values
and input gradients in float32/float64, spatial_scale, boxes past the borders, empty
rois, gradcheck, the modules, the ops' second outputs, errors."""

import numpy as np
import pytest
import torch
from vision_reference import position_sensitive, random_rois, torch_ps_roi_pool, torch_roi_align, torch_roi_pool

import ember
from ember.autograd import gradcheck
from ember_vision import ops


def _compare(ember_fn, torch_fn, x, rois, dtype, seed=0):
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    got = ember_fn(ex, ember.tensor(rois, dtype=getattr(ember, dtype)))
    tx = torch.tensor(x, requires_grad=True)
    expected = torch_fn(tx, torch.tensor(rois))
    assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == tuple(expected.shape)
    tol = 2e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    weights = np.random.default_rng(seed).normal(size=tuple(expected.shape))
    (got * ember.tensor(weights, dtype=got.dtype)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("output_size, scale", [((3, 3), 1.0), ((2, 4), 0.5), (1, 0.25)])
def test_roi_pool(output_size, scale, dtype):
    rng = np.random.default_rng(0)
    x, rois = rng.normal(size=(2, 3, 7, 9)), random_rois(rng, 6, 2, 7 / scale, 9 / scale)
    pair = (output_size, output_size) if isinstance(output_size, int) else output_size
    _compare(lambda t, r: ops.roi_pool(t, r, output_size, scale),
             lambda t, r: torch_roi_pool(t, r, pair, scale), x, rois, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("output_size, scale, ratio", [((2, 2), 1.0, -1), ((3, 2), 0.5, 2), (1, 1.0, 0)])
def test_ps_roi_align(output_size, scale, ratio, dtype):
    rng = np.random.default_rng(1)
    pair = (output_size, output_size) if isinstance(output_size, int) else output_size
    x = rng.normal(size=(2, 2 * pair[0] * pair[1], 6, 8))
    rois = random_rois(rng, 5, 2, 6 / scale, 8 / scale)
    _compare(lambda t, r: ops.ps_roi_align(t, r, output_size, scale, ratio),
             lambda t, r: position_sensitive(torch_roi_align(t, r, pair, scale, ratio, aligned=True), pair),
             x, rois, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("output_size, scale", [((2, 2), 1.0), ((3, 1), 0.5)])
def test_ps_roi_pool(output_size, scale, dtype):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 3 * output_size[0] * output_size[1], 7, 6))
    rois = random_rois(rng, 6, 2, 7 / scale, 6 / scale)
    _compare(lambda t, r: ops.ps_roi_pool(t, r, output_size, scale),
             lambda t, r: torch_ps_roi_pool(t, r, output_size, scale), x, rois, dtype)


def test_gradcheck():
    rng = np.random.default_rng(3)
    rois = ember.tensor(random_rois(rng, 4, 2, 5, 6))
    x = ember.tensor(rng.normal(size=(2, 8, 5, 6)), requires_grad=True)
    assert gradcheck(lambda t: ops.roi_pool(t, rois, 2), (x,))
    assert gradcheck(lambda t: ops.ps_roi_align(t, rois, 2, 1.0, 2), (x,))
    assert gradcheck(lambda t: ops.ps_roi_pool(t, rois, 2), (x,))


def test_roi_pool_argmax_ties_nan_and_rounding():
    x = ember.tensor([[[[1.0, 3.0, 3.0, float("nan")], [0.0, 2.0, 2.0, 0.0]]]])
    out, argmax = ember.ops.torchvision.roi_pool(x, ember.tensor([[0.0, 0, 0, 3, 1]]), spatial_scale=1.0,
                                                 pooled_height=1, pooled_width=1)
    assert out.item() == 3.0 and argmax.dtype == ember.int32 and argmax.item() == 1  # first max; NaN skipped
    # 0.5 rounds away from zero (to 1): the box is columns 1..1, rows 0..0
    out, argmax = ember.ops.torchvision.roi_pool(x, ember.tensor([[0.0, 0.5, 0, 0.5, 0.4]]), spatial_scale=1.0,
                                                 pooled_height=1, pooled_width=1)
    assert out.item() == 3.0 and argmax.item() == 1


def test_position_sensitive_mapping_and_an_empty_grid():
    x = ember.randn(1, 8, 4, 4)
    out, mapping = ember.ops.torchvision.ps_roi_align(x, ember.tensor([[0.0, 0, 0, 3, 3]]), spatial_scale=1.0,
                                                      pooled_height=2, pooled_width=2, sampling_ratio=-1)
    assert mapping.dtype == ember.int32 and mapping.tolist() == [[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]]
    # a zero-size roi has no samples: 0 / 0 is NaN, as torchvision's kernel gives
    empty = ops.ps_roi_align(x, ember.tensor([[0.0, 1, 1, 1, 1]]), 2)
    assert np.isnan(empty.numpy()).all()


def test_modules_and_empty_rois():
    x = ember.randn(2, 4, 5, 5)
    per_image = [ember.tensor([[0.0, 0, 3, 3]]), ember.zeros(0, 4)]
    for module, fn in ((ops.RoIPool(2, 0.5), lambda: ops.roi_pool(x, per_image, 2, 0.5)),
                       (ops.PSRoIAlign(2, 0.5, 2), lambda: ops.ps_roi_align(x, per_image, 2, 0.5, 2)),
                       (ops.PSRoIPool(2, 0.5), lambda: ops.ps_roi_pool(x, per_image, 2, 0.5))):
        np.testing.assert_array_equal(module(x, per_image).numpy(), fn().numpy())
    assert repr(ops.RoIPool((2, 3), 0.25)) == "RoIPool(output_size=(2, 3), spatial_scale=0.25)"
    assert repr(ops.PSRoIAlign(2, 0.25, 2)) == "PSRoIAlign(output_size=2, spatial_scale=0.25, sampling_ratio=2)"
    for fn in (ops.roi_pool, ops.ps_roi_pool, ops.ps_roi_align):
        assert tuple(fn(x, ember.zeros(0, 5), 2).shape)[0] == 0


def test_errors_as_torchvision():
    x = ember.randn(1, 6, 4, 4)
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling height"):
        ops.ps_roi_align(x, ember.zeros(1, 5), 2)
    with pytest.raises(RuntimeError, match="input channels must be a multiple of pooling height"):
        ops.ps_roi_pool(x, ember.zeros(1, 5), 2)
    with pytest.raises(RuntimeError, match="input and rois must have the same dtype"):
        ops.roi_pool(x, ember.zeros(1, 5, dtype=ember.float64), 2)
    with pytest.raises(AssertionError, match=r"Tensor\[K, 5\]"):
        ops.roi_pool(x, ember.zeros(1, 4), 2)
