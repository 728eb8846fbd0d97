"""ember_vision.ops.boxes against references written with torch arithmetic (torchvision
does not import here): conversions, areas, the IoU family with gradients, clipping,
small-box removal; float32/float64, integer boxes, empty sets, errors as torchvision's."""

import math

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck
from ember_vision import ops

FLOATS = ["float32", "float64"]


def random_boxes(rng, n, low=0.0, high=50.0):
    corners = rng.uniform(low, high, size=(n, 2))
    return np.concatenate([corners, corners + rng.uniform(0.5, 20, size=(n, 2))], axis=1)


def pair_of_sets(seed, n=5, m=4):
    rng = np.random.default_rng(seed)
    a, b = random_boxes(rng, n), random_boxes(rng, m)
    b[0] = a[0]  # identical boxes: IoU 1
    b[1] = a[1] + [100, 100, 100, 100]  # disjoint: IoU 0, GIoU < 0
    return a, b


# ---------------------------------------------------------------- torch references


def t_area(b):
    return (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])


def t_parts(a, b):
    """Per pair (N, M): intersection, union, enclosing area, centre distance^2, diagonal^2."""
    ax1, ay1, ax2, ay2 = (a[:, None, k] for k in range(4))
    bx1, by1, bx2, by2 = (b[None, :, k] for k in range(4))
    iw = (torch.minimum(ax2, bx2) - torch.maximum(ax1, bx1)).clamp(min=0)
    ih = (torch.minimum(ay2, by2) - torch.maximum(ay1, by1)).clamp(min=0)
    inter = iw * ih
    union = t_area(a)[:, None] + t_area(b)[None, :] - inter
    ew = (torch.maximum(ax2, bx2) - torch.minimum(ax1, bx1)).clamp(min=0)
    eh = (torch.maximum(ay2, by2) - torch.minimum(ay1, by1)).clamp(min=0)
    centres = ((ax1 + ax2) / 2 - (bx1 + bx2) / 2) ** 2 + ((ay1 + ay2) / 2 - (by1 + by2) / 2) ** 2
    return inter, union, ew * eh, centres, ew ** 2 + eh ** 2


def t_iou(a, b):
    inter, union, *_ = t_parts(a, b)
    return inter / union


def t_giou(a, b):
    inter, union, enclosing, *_ = t_parts(a, b)
    return inter / union - (enclosing - union) / enclosing


def t_diou(a, b, eps=1e-7):
    inter, union, _, centres, diagonal = t_parts(a, b)
    return inter / union - centres / (diagonal + eps)


def t_ciou(a, b, eps=1e-7):
    iou = t_iou(a, b)
    wa, ha = (a[:, 2] - a[:, 0])[:, None], (a[:, 3] - a[:, 1])[:, None]
    wb, hb = (b[:, 2] - b[:, 0])[None, :], (b[:, 3] - b[:, 1])[None, :]
    v = 4 / math.pi ** 2 * (torch.atan(wa / ha) - torch.atan(wb / hb)) ** 2
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return t_diou(a, b, eps) - alpha * v


PAIRWISE = {"box_iou": t_iou, "generalized_box_iou": t_giou, "distance_box_iou": t_diou, "complete_box_iou": t_ciou}


# ---------------------------------------------------------------- the IoU family


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(PAIRWISE))
def test_pairwise_values_and_gradients(name, dtype):
    a, b = pair_of_sets(1)
    ea = ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True)
    eb = ember.tensor(b, dtype=getattr(ember, dtype), requires_grad=True)
    ta = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    tb = torch.tensor(b, dtype=getattr(torch, dtype), requires_grad=True)
    got, expected = getattr(ops, name)(ea, eb), PAIRWISE[name](ta, tb)
    assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == (5, 4)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    weights = np.random.default_rng(2).normal(size=(5, 4))
    (got * ember.tensor(weights, dtype=got.dtype)).sum().backward()
    (expected * torch.tensor(weights, dtype=expected.dtype)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("name", ["box_iou", "generalized_box_iou", "distance_box_iou"])
def test_pairwise_gradcheck(name):
    a, b = pair_of_sets(3, 3, 2)
    ea, eb = (ember.tensor(x, dtype=ember.float64, requires_grad=True) for x in (a, b))
    assert gradcheck(getattr(ops, name), (ea, eb))


def test_iou_of_known_boxes_and_empty_sets():
    a = ember.tensor([[0.0, 0.0, 2.0, 2.0]])
    b = ember.tensor([[1.0, 1.0, 3.0, 3.0], [2.0, 0.0, 4.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(ops.box_iou(a, b).numpy(), [[1 / 7, 0.0, 0.0]], rtol=1e-6)
    assert math.isnan(ops.box_iou(b[2:], b[2:]).item())  # 0 / 0, as torchvision
    np.testing.assert_allclose(ops.generalized_box_iou(a, b[1:2]).numpy(), [[0.0]], atol=1e-7)
    for name in PAIRWISE:
        assert tuple(getattr(ops, name)(ember.zeros(0, 4), b).shape) == (0, 3)
        assert tuple(getattr(ops, name)(a, ember.zeros(0, 4)).shape) == (1, 0)


def test_integer_boxes_are_upcast_as_torchvision():
    a, b = ember.tensor([[0, 0, 4, 4]], dtype=ember.int16), ember.tensor([[2, 2, 6, 6]], dtype=ember.int16)
    assert ops.box_area(a).dtype == ember.int32  # small ints to int32
    assert ops.box_area(a.long()).dtype == ember.int64
    assert ops.box_area(a.half()).dtype == ember.float32
    iou = ops.box_iou(a, b)
    assert iou.dtype == ember.float32
    np.testing.assert_allclose(iou.numpy(), [[4 / 28]], rtol=1e-6)


# ---------------------------------------------------------------- conversions, areas, clipping, filtering


@pytest.mark.parametrize("dtype", FLOATS)
def test_box_convert_every_pair_of_formats(dtype):
    xyxy = torch.tensor(random_boxes(np.random.default_rng(4), 6), dtype=getattr(torch, dtype))
    x1, y1, x2, y2 = xyxy.unbind(-1)
    forms = {"xyxy": xyxy, "xywh": torch.stack([x1, y1, x2 - x1, y2 - y1], -1),
             "cxcywh": torch.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], -1)}
    for a, source in forms.items():
        for b, target in forms.items():
            got = ops.box_convert(ember.tensor(source.numpy()), a, b)
            np.testing.assert_allclose(got.numpy(), target.numpy(), rtol=1e-6, atol=1e-5)
    batched = ember.tensor(forms["cxcywh"].numpy()).reshape(2, 3, 4)  # any leading shape
    np.testing.assert_allclose(ops.box_convert(batched, "cxcywh", "xyxy").numpy().reshape(6, 4),
                               xyxy.numpy(), rtol=1e-6, atol=1e-5)


def test_box_convert_same_format_is_a_copy_and_bad_formats_raise():
    boxes = ember.tensor([[1.0, 2.0, 3.0, 4.0]])
    same = ops.box_convert(boxes, "xyxy", "xyxy")
    same[0, 0] = 9.0
    assert boxes[0, 0].item() == 1.0
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions for given in_fmt xyxy and out_fmt"):
        ops.box_convert(boxes, "xyxy", "xywhz")


@pytest.mark.parametrize("dtype", FLOATS)
def test_box_area_and_its_gradient(dtype):
    boxes = random_boxes(np.random.default_rng(5), 7)
    e = ember.tensor(boxes, dtype=getattr(ember, dtype), requires_grad=True)
    t = torch.tensor(boxes, dtype=getattr(torch, dtype), requires_grad=True)
    got, expected = ops.box_area(e), t_area(t)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    assert tuple(ops.box_area(ember.zeros(0, 4)).shape) == (0,)


def test_clip_boxes_to_image_any_leading_shape():
    boxes = np.array([[[-5.0, -3.0, 40.0, 25.0], [10.0, 12.0, 14.0, 15.0]], [[-1.0, 50.0, 70.0, 80.0]] * 2])
    got = ops.clip_boxes_to_image(ember.tensor(boxes), (20, 30))  # (height, width)
    t = torch.tensor(boxes)
    expected = torch.stack([t[..., 0].clamp(0, 30), t[..., 1].clamp(0, 20), t[..., 2].clamp(0, 30),
                            t[..., 3].clamp(0, 20)], -1)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert tuple(ops.clip_boxes_to_image(ember.zeros(0, 4), (5, 5)).shape) == (0, 4)


def test_remove_small_boxes():
    boxes = ember.tensor([[0.0, 0.0, 1.0, 5.0], [0.0, 0.0, 2.0, 2.0], [3.0, 3.0, 3.5, 9.0], [0.0, 0.0, 2.0, 1.99]])
    keep = ops.remove_small_boxes(boxes, 2.0)
    assert keep.dtype == ember.int64 and keep.tolist() == [1]
    assert ops.remove_small_boxes(boxes, 0.5).tolist() == [0, 1, 2, 3]
    assert ops.remove_small_boxes(ember.zeros(0, 4), 1.0).tolist() == []
