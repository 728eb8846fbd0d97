"""The layers of ember_vision.ops against torch computations of the same definitions
(torchvision does not import here): sigmoid_focal_loss, stochastic_depth and
drop_block2d/3d (bit-equal, ember's bernoulli_ draws torch's numbers for one seed),
FrozenBatchNorm2d, SqueezeExcitation, FeaturePyramidNetwork with its extra blocks,
MultiScaleRoIAlign; values, gradients, state-dict names, errors."""

import math
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from vision_reference import torch_roi_align

import ember
from ember_vision import ops

FLOATS = ["float32", "float64"]


def E(array, dtype="float64", requires_grad=False):
    return ember.tensor(np.asarray(array), dtype=getattr(ember, dtype), requires_grad=requires_grad)


def T(array, dtype="float64", requires_grad=False):
    return torch.tensor(np.asarray(array), dtype=getattr(torch, dtype), requires_grad=requires_grad)


# ---------------------------------------------------------------- sigmoid_focal_loss


def torch_focal(x, t, alpha, gamma):
    p = torch.sigmoid(x)
    ce = TF.binary_cross_entropy_with_logits(x, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    loss = ce * (1 - p_t) ** gamma
    return (alpha * t + (1 - alpha) * (1 - t)) * loss if alpha >= 0 else loss


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("alpha, gamma", [(0.25, 2), (-1, 0.5), (0.7, 0)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_sigmoid_focal_loss(reduction, alpha, gamma, dtype):
    rng = np.random.default_rng(0)
    x, t = rng.normal(size=(3, 5)) * 3, rng.integers(0, 2, size=(3, 5)).astype(float)
    t[0, :2] = [0.3, 0.9]  # soft labels too
    ex, tx = E(x, dtype, True), T(x, dtype, True)
    got = ops.sigmoid_focal_loss(ex, E(t, dtype), alpha, gamma, reduction)
    expected = torch_focal(tx, T(t, dtype), alpha, gamma)
    expected = {"none": expected, "mean": expected.mean(), "sum": expected.sum()}[reduction]
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_sigmoid_focal_loss_bad_reduction_and_empty():
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ops.sigmoid_focal_loss(ember.zeros(2), ember.zeros(2), reduction="max")
    assert tuple(ops.sigmoid_focal_loss(ember.zeros(0, 3), ember.zeros(0, 3)).shape) == (0, 3)


# ---------------------------------------------------------------- stochastic depth and DropBlock


def torch_stochastic_depth(x, p, mode):
    size = [x.shape[0]] + [1] * (x.ndim - 1) if mode == "row" else [1] * x.ndim
    noise = torch.empty(size, dtype=x.dtype).bernoulli_(1 - p)
    return x * (noise / (1 - p) if p < 1 else noise)


@pytest.mark.parametrize("mode", ["row", "batch"])
@pytest.mark.parametrize("p", [0.3, 0.8, 1.0])
def test_stochastic_depth_draws_torchs_noise(p, mode):
    x = np.random.default_rng(1).normal(size=(16, 3, 2))
    for seed in range(3):
        ember.manual_seed(seed)
        got = ops.stochastic_depth(E(x), p, mode)
        torch.manual_seed(seed)
        np.testing.assert_array_equal(got.numpy(), torch_stochastic_depth(T(x), p, mode).numpy())


def test_stochastic_depth_off_module_and_errors():
    x = ember.randn(4, 3)
    assert ops.stochastic_depth(x, 0.5, "row", training=False) is x
    assert ops.stochastic_depth(x, 0.0, "row") is x
    module = ops.StochasticDepth(0.5, "row")
    assert repr(module) == "StochasticDepth(p=0.5, mode=row)"
    assert module.eval()(x) is x
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got 1.5"):
        ops.stochastic_depth(x, 1.5, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row', but got col"):
        ops.stochastic_depth(x, 0.5, "col")


def torch_drop_block(x, p, block_size, eps=1e-6):
    spatial = x.shape[2:]
    block_size = min(block_size, *spatial)
    valid = [s - block_size + 1 for s in spatial]
    gamma = p * math.prod(spatial) / (block_size ** len(spatial) * math.prod(valid))
    noise = torch.empty(tuple(x.shape[:2]) + tuple(valid), dtype=x.dtype).bernoulli_(gamma)
    noise = TF.pad(noise, [block_size // 2] * 2 * len(spatial), value=0)
    pool = TF.max_pool2d if len(spatial) == 2 else TF.max_pool3d
    keep = 1 - pool(noise, stride=1, kernel_size=block_size, padding=block_size // 2)
    return x * keep * (keep.numel() / (eps + keep.sum()))


@pytest.mark.parametrize("shape, block_size", [((2, 3, 9, 8), 3), ((1, 2, 6, 7), 5), ((2, 1, 5, 5), 9),
                                               ((1, 2, 5, 4, 6), 3)])
def test_drop_block_draws_torchs_noise(shape, block_size):
    x = np.random.default_rng(2).normal(size=shape)
    fn = ops.drop_block2d if len(shape) == 4 else ops.drop_block3d
    for seed in range(3):
        ember.manual_seed(seed)
        got = fn(E(x), 0.4, block_size)
        torch.manual_seed(seed)
        np.testing.assert_allclose(got.numpy(), torch_drop_block(T(x), 0.4, block_size).numpy(), rtol=1e-12)


def test_drop_block_an_even_block_does_not_fit_as_in_torchvision():
    # padding block_size // 2 on both sides grows the mask by one: the product then fails
    x = np.random.default_rng(2).normal(size=(1, 2, 6, 7))
    with pytest.raises(RuntimeError, match="must match the size"):
        torch_drop_block(T(x), 0.4, 4)
    with pytest.raises(RuntimeError, match="must match the size"):
        ops.drop_block2d(E(x), 0.4, 4)


def test_drop_block_inplace_off_module_and_errors():
    x = ember.randn(1, 2, 6, 6)
    assert ops.drop_block2d(x, 0.5, 3, training=False) is x
    y = x.clone()
    ember.manual_seed(5)
    out = ops.drop_block2d(y, 0.5, 3, inplace=True)
    ember.manual_seed(5)
    np.testing.assert_array_equal(y.numpy(), ops.drop_block2d(x, 0.5, 3).numpy())
    assert out is y
    assert repr(ops.DropBlock2d(0.1, 5)) == "DropBlock2d(p=0.1, block_size=5, inplace=False)"
    assert ops.DropBlock3d(0.1, 2).eval()(x) is x
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got -0.1"):
        ops.drop_block2d(x, -0.1, 3)


# ---------------------------------------------------------------- FrozenBatchNorm2d and SqueezeExcitation


def test_frozen_batch_norm_is_batch_norm_in_eval_and_loads_its_checkpoint():
    rng = np.random.default_rng(3)
    stats = {k: rng.uniform(0.5, 2, size=4) for k in ("weight", "bias", "running_mean", "running_var")}
    bn = ember.nn.BatchNorm2d(4)
    bn.load_state_dict({**{k: E(v, "float32") for k, v in stats.items()},
                        "num_batches_tracked": ember.tensor(3)})
    frozen = ops.FrozenBatchNorm2d(4)
    frozen.load_state_dict(bn.state_dict())  # num_batches_tracked is dropped, not unexpected
    x = rng.normal(size=(2, 4, 3, 3))
    expected = TF.batch_norm(T(x, "float32"), *(T(stats[k], "float32") for k in ("running_mean", "running_var")),
                             T(stats["weight"], "float32"), T(stats["bias"], "float32"), training=False, eps=1e-5)
    np.testing.assert_allclose(frozen(E(x, "float32")).numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    assert sorted(dict(frozen.named_buffers())) == ["bias", "running_mean", "running_var", "weight"]
    assert not list(frozen.parameters())
    assert repr(frozen) == "FrozenBatchNorm2d(4, eps=1e-05)"


def test_squeeze_excitation_and_its_gradients():
    ember.manual_seed(0)
    se = ops.SqueezeExcitation(6, 3).double()
    x = np.random.default_rng(4).normal(size=(2, 6, 5, 4))
    w1, b1, w2, b2 = (T(p.detach().numpy(), requires_grad=True) for p in
                      (se.fc1.weight, se.fc1.bias, se.fc2.weight, se.fc2.bias))
    tx, ex = T(x, requires_grad=True), E(x, requires_grad=True)
    gate = torch.sigmoid(TF.conv2d(torch.relu(TF.conv2d(tx.mean((2, 3), keepdim=True), w1, b1)), w2, b2))
    expected = gate * tx
    got = se(ex)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(se.fc1.weight.grad.numpy(), w1.grad.numpy(), rtol=1e-10)
    assert sorted(dict(se.named_parameters())) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]


# ---------------------------------------------------------------- FeaturePyramidNetwork


def torch_fpn(params, features, extra=None):
    """The top-down pathway with the module's own weights (names as the state dict)."""
    inner = [TF.conv2d(f, params[f"inner_blocks.{i}.0.weight"], params[f"inner_blocks.{i}.0.bias"])
             for i, f in enumerate(features)]
    last = inner[-1]
    results = [TF.conv2d(last, params[f"layer_blocks.{len(inner) - 1}.0.weight"],
                         params[f"layer_blocks.{len(inner) - 1}.0.bias"], padding=1)]
    for i in range(len(inner) - 2, -1, -1):
        last = inner[i] + TF.interpolate(last, size=inner[i].shape[-2:], mode="nearest")
        results.insert(0, TF.conv2d(last, params[f"layer_blocks.{i}.0.weight"], params[f"layer_blocks.{i}.0.bias"],
                                    padding=1))
    if extra == "pool":
        results.append(TF.max_pool2d(results[-1], 1, 2, 0))
    elif extra == "p6p7":
        p6 = TF.conv2d(features[-1], params["extra_blocks.p6.weight"], params["extra_blocks.p6.bias"], 2, 1)
        results += [p6, TF.conv2d(torch.relu(p6), params["extra_blocks.p7.weight"], params["extra_blocks.p7.bias"],
                                  2, 1)]
    return results


@pytest.mark.parametrize("extra", [None, "pool", "p6p7"])
def test_feature_pyramid_network(extra):
    ember.manual_seed(1)
    blocks = {None: None, "pool": ops.feature_pyramid_network.LastLevelMaxPool(),
              "p6p7": ops.feature_pyramid_network.LastLevelP6P7(7, 4)}
    fpn = ops.FeaturePyramidNetwork([3, 5, 7], 4, extra_blocks=blocks[extra]).double()
    params = {k: T(v.detach().numpy()) for k, v in fpn.state_dict().items()}
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=(2, c, s, s + 1)) for c, s in ((3, 16), (5, 8), (7, 3))]  # 3 -> 8: an odd upsampling
    out = fpn(OrderedDict((f"c{i}", E(a, requires_grad=True)) for i, a in enumerate(arrays)))
    names = {None: [], "pool": ["pool"], "p6p7": ["p6", "p7"]}[extra]
    assert list(out) == ["c0", "c1", "c2"] + names
    for got, expected in zip(out.values(), torch_fpn(params, [T(a) for a in arrays], extra)):
        assert tuple(got.shape) == tuple(expected.shape)
        np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_fpn_init_names_and_errors():
    fpn = ops.FeaturePyramidNetwork([2, 3], 4)
    assert "inner_blocks.0.0.weight" in fpn.state_dict() and "layer_blocks.1.0.bias" in fpn.state_dict()
    assert all(float(abs(b).max()) == 0 for name, b in fpn.named_parameters() if name.endswith("bias"))
    old = OrderedDict((k.replace(".0.weight", ".weight").replace(".0.bias", ".bias"), v)
                      for k, v in fpn.state_dict().items())
    old._metadata = OrderedDict([("", {"version": 1})])  # version 1: bare convolutions, renamed on load
    other = ops.FeaturePyramidNetwork([2, 3], 4)
    other.load_state_dict(old)
    np.testing.assert_array_equal(other.inner_blocks[0][0].weight.detach().numpy(),
                                  fpn.inner_blocks[0][0].weight.detach().numpy())
    with pytest.raises(ValueError, match="in_channels=0 is currently not supported"):
        ops.FeaturePyramidNetwork([2, 0], 4)
    with pytest.raises(TypeError, match="extra_blocks should be of type ExtraFPNBlock"):
        ops.FeaturePyramidNetwork([2], 4, extra_blocks=ember.nn.Identity())


# ---------------------------------------------------------------- MultiScaleRoIAlign


def test_multi_scale_roi_align_reads_each_box_from_its_level():
    rng = np.random.default_rng(6)
    maps = {"p2": rng.normal(size=(2, 3, 32, 32)), "p3": rng.normal(size=(2, 3, 16, 16)),
            "p4": rng.normal(size=(2, 3, 8, 8)), "skip": rng.normal(size=(2, 3, 4, 4))}
    corners = rng.uniform(0, 90, size=(9, 2))
    sides = np.array([[4, 4], [20, 30], [60, 60], [100, 120], [8, 16], [30, 10], [2, 3], [120, 120], [50, 40.0]])
    boxes = [np.concatenate([corners[:5], corners[:5] + sides[:5]], 1),
             np.concatenate([corners[5:], corners[5:] + sides[5:]], 1)]
    pooler = ops.MultiScaleRoIAlign(["p2", "p3", "p4"], 3, 2, canonical_scale=56, canonical_level=3)
    x = OrderedDict((k, E(v, requires_grad=True)) for k, v in maps.items())
    got = pooler(x, [E(b) for b in boxes], [(128, 128), (120, 128)])
    assert pooler.scales == [0.25, 0.125, 0.0625]
    levels = [min(max(math.floor(3 + math.log2(math.sqrt(w * h) / 56) + 1e-6), 2), 4) - 2 for w, h in sides]
    tmaps = {k: T(v, requires_grad=True) for k, v in maps.items()}
    rois = torch.cat([torch.cat([torch.full((len(b), 1), float(i)), T(b)], 1) for i, b in enumerate(boxes)])
    expected = torch.stack([torch_roi_align(tmaps[f"p{2 + lvl}"], rois[k:k + 1], (3, 3), 0.25 / 2 ** lvl, 2)[0]
                            for k, lvl in enumerate(levels)])
    assert sorted(set(levels)) == [0, 1, 2]
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    got.sum().backward()
    expected.sum().backward()
    for name in ("p2", "p3", "p4"):
        np.testing.assert_allclose(x[name].grad.numpy(), tmaps[name].grad.numpy(), rtol=1e-10, atol=1e-12)
    assert x["skip"].grad is None
    assert repr(pooler) == "MultiScaleRoIAlign(featmap_names=['p2', 'p3', 'p4'], output_size=(3, 3), sampling_ratio=2)"


def test_multi_scale_roi_align_one_level_and_errors():
    pooler = ops.MultiScaleRoIAlign(["feat"], (2, 2), -1)
    x = {"feat": ember.randn(1, 2, 8, 8)}
    boxes = [ember.tensor([[0.0, 0.0, 16.0, 16.0]])]
    expected = ops.roi_align(x["feat"], boxes, 2, spatial_scale=0.5)
    np.testing.assert_array_equal(pooler(x, boxes, [(16, 16)]).numpy(), expected.numpy())
    with pytest.raises(ValueError, match="images list should not be empty"):
        ops.MultiScaleRoIAlign(["feat"], 2, -1)(x, boxes, [])
