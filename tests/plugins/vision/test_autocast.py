"""torchvision's ops under ``ember.autocast('cpu', dtype=bfloat16)``: each runs in float32
and gives its outputs back in the input's dtype (nms: int64 indices), as torchvision's
Autocast kernels do; the values are the op's on the float32 inputs, rounded once to
bfloat16, and gradients flow back through the casts.

Tests for plugins/vision/src/ember_vision/ops/autocast.py (PyTorch counterpart:
torchvision/csrc/ops/autocast/, torchvision 0.28) and ember.library.register_autocast_kernel.
"""

import numpy as np
import pytest
from vision_reference import random_rois

import ember
from ember_vision import ops

tv = ember.ops.torchvision
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 8, 9, 10)).astype(np.float32)
ROIS = random_rois(RNG, 5, 2, 9, 10).astype(np.float32)
ROI_OPS = {  # name: (op, its attributes): the ops of (input, rois)
    "roi_align": (tv.roi_align, dict(spatial_scale=1.0, pooled_height=2, pooled_width=3, sampling_ratio=2,
                                      aligned=True)),
    "roi_pool": (tv.roi_pool, dict(spatial_scale=1.0, pooled_height=2, pooled_width=3)),
    "ps_roi_align": (tv.ps_roi_align, dict(spatial_scale=1.0, pooled_height=2, pooled_width=2, sampling_ratio=2)),
    "ps_roi_pool": (tv.ps_roi_pool, dict(spatial_scale=1.0, pooled_height=2, pooled_width=2)),
}


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", sorted(ROI_OPS))
@pytest.mark.parametrize("input_dtype", ["bfloat16", "float32"])
def test_roi_ops_run_in_float32_and_give_the_inputs_dtype(name, input_dtype):
    op, attrs = ROI_OPS[name]
    dtype = getattr(ember, input_dtype)
    x, rois = ember.tensor(X).to(dtype), ember.tensor(ROIS)  # float32 rois beside a bfloat16 map
    with ember.autocast("cpu", dtype=ember.bfloat16):
        got = _outputs(op(x, rois, **attrs))
    float32 = _outputs(op(x.float(), rois, **attrs))  # outside the region: the float32 result
    for out, want in zip(got, float32):
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.float().numpy(), want.to(dtype).float().numpy())
    exact = _outputs(op(ember.tensor(X), rois, **attrs))[0].numpy()
    tolerance = 2 ** -7 * max(1.0, float(np.abs(exact).max()))  # bfloat16's rounding of input and output
    np.testing.assert_allclose(got[0].float().numpy(), exact, atol=tolerance * 2)


@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_deform_conv2d_runs_in_float32_and_gives_the_inputs_dtype(use_mask):
    rng = np.random.default_rng(1)
    x, offset = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((2, 18, 6, 6))
    weight, bias, mask = rng.standard_normal((3, 4, 3, 3)), rng.standard_normal(3), rng.random((2, 9, 6, 6))
    tensors = [ember.tensor(a.astype(np.float32), requires_grad=True) for a in (x, offset, weight, bias, mask)]
    mask_arg = tensors[4] if use_mask else None
    with ember.autocast("cpu", dtype=ember.bfloat16):
        features = tensors[0].bfloat16()  # as a layer run in bfloat16 hands it on
        out = ops.deform_conv2d(features, tensors[1].bfloat16(), tensors[2], tensors[3], padding=1, mask=mask_arg)
    assert out.dtype == ember.bfloat16
    want = ops.deform_conv2d(features.float(), tensors[1].bfloat16().float(), tensors[2], tensors[3], padding=1,
                             mask=mask_arg)
    np.testing.assert_array_equal(out.detach().float().numpy(), want.detach().bfloat16().float().numpy())
    out.float().sum().backward()
    assert tensors[2].grad.dtype == ember.float32 and tensors[0].grad.dtype == ember.float32
    reference = [ember.tensor(a.astype(np.float32), requires_grad=True) for a in (x, offset, weight)]
    ops.deform_conv2d(reference[0].bfloat16().float(), reference[1].bfloat16().float(), reference[2], tensors[3],
                      padding=1, mask=mask_arg.detach() if use_mask else None).sum().backward()
    for got, want in zip(tensors[:3], reference):  # the gradients through the casts, rounded to bfloat16 on the way
        np.testing.assert_allclose(got.grad.numpy(), want.grad.bfloat16().float().numpy(), rtol=2 ** -7, atol=1e-2)


def test_nms_runs_in_float32_and_returns_int64_indices():
    rng = np.random.default_rng(2)
    boxes = np.concatenate([rng.uniform(0, 20, (30, 2)), rng.uniform(0, 20, (30, 2)) + 20], axis=1)
    scores = rng.random(30)
    b, s = ember.tensor(boxes).bfloat16(), ember.tensor(scores).bfloat16()
    with ember.autocast("cpu", dtype=ember.bfloat16):
        keep = tv.nms(b, s, iou_threshold=0.3)
    assert keep.dtype == ember.int64
    np.testing.assert_array_equal(keep.numpy(), tv.nms(b.float(), s.float(), iou_threshold=0.3).numpy())


def test_float64_inputs_stay_float64():
    x, rois = ember.tensor(X.astype(np.float64)), ember.tensor(ROIS.astype(np.float64))
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = ops.roi_align(x, rois, 2)
    assert out.dtype == ember.float64
    np.testing.assert_array_equal(out.numpy(), ops.roi_align(x, rois, 2).numpy())
