"""Tests for ember/nn/utils/prune.py against torch.nn.utils.prune: masks, mechanism, state dicts."""

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as torch_prune

import ember
from ember.nn.utils import prune

# Weights with many repeated values: ties straddle the pruning boundary, so the masks
# agree only if ember replays torch's topk selection (NOTE [ Replaying torch's topk ties ]).
TIED = {"tied": lambda rng, shape: rng.integers(-3, 4, shape).astype("float32"),
        "normal": lambda rng, shape: rng.standard_normal(shape).astype("float32")}


def linear_pair(in_features, out_features, values="normal", seed=0, dtype="float32"):
    """An ember and a torch Linear with the same weight and bias."""
    rng = np.random.default_rng(seed)
    weight = TIED[values](rng, (out_features, in_features)).astype(dtype)
    bias = TIED[values](rng, (out_features,)).astype(dtype)
    ours, theirs = ember.nn.Linear(in_features, out_features), torch.nn.Linear(in_features, out_features)
    ours.load_state_dict({"weight": ember.tensor(weight), "bias": ember.tensor(bias)})
    theirs.load_state_dict({"weight": torch.tensor(weight), "bias": torch.tensor(bias)})
    return ours.to(getattr(ember, dtype)), theirs.to(getattr(torch, dtype))


def conv_pair(values="normal", seed=0, shape=(6, 4, 3, 3)):
    rng = np.random.default_rng(seed)
    weight = TIED[values](rng, shape)
    kernel = tuple(shape[2:])
    ours, theirs = ember.nn.Conv2d(shape[1], shape[0], kernel), torch.nn.Conv2d(shape[1], shape[0], kernel)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def assert_same_masks(ours, theirs):
    our_buffers = {k: v.numpy() for k, v in ours.named_buffers()}
    their_buffers = {k: v.numpy() for k, v in theirs.named_buffers()}
    assert our_buffers.keys() == their_buffers.keys()
    for key in our_buffers:
        np.testing.assert_array_equal(our_buffers[key], their_buffers[key], err_msg=key)


@pytest.mark.parametrize("values", ["tied", "normal"])
@pytest.mark.parametrize("amount", [0, 1, 7, 0.3, 0.5, 0.99, 1.0])
def test_l1_unstructured_gives_torchs_mask(values, amount):
    ours, theirs = linear_pair(20, 9, values)
    prune.l1_unstructured(ours, "weight", amount)
    torch_prune.l1_unstructured(theirs, "weight", amount)
    assert_same_masks(ours, theirs)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


@pytest.mark.parametrize("size", [5, 63, 64, 200, 640, 5000])
@pytest.mark.parametrize("count", [1, 2, 3, 10])
def test_ties_follow_torchs_topk_in_both_of_its_regimes(size, count):
    """torch uses partial_sort when count * 64 <= size and nth_element otherwise."""
    count = min(count, size)
    rng = np.random.default_rng(size + count)
    values = rng.integers(0, 3, size).astype("float32")
    for module_lib, prune_lib in ((ember, prune), (torch, torch_prune)):
        module = module_lib.nn.Linear(size, 1, bias=False)
        prune_lib.l1_unstructured(module, "weight", count, importance_scores=module_lib.tensor(values[None]))
        if module_lib is ember:
            ours = module.weight_mask.numpy()
        else:
            theirs = module.weight_mask.numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("values", ["tied", "normal"])
@pytest.mark.parametrize("n", [1, 2, 3.5, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [0, 1, -1, 3])
@pytest.mark.parametrize("amount", [1, 0.5, 0])
def test_ln_structured_gives_torchs_mask(values, n, dim, amount):
    ours, theirs = conv_pair(values, shape=(6, 4, 3, 5))
    prune.ln_structured(ours, "weight", amount, n=n, dim=dim)
    torch_prune.ln_structured(theirs, "weight", amount, n=n, dim=dim)
    assert_same_masks(ours, theirs)


@pytest.mark.parametrize("values", ["tied", "normal"])
def test_repeated_pruning_composes_through_a_container_like_torch(values):
    ours, theirs = conv_pair(values)
    for lib, module in ((prune, ours), (torch_prune, theirs)):
        lib.l1_unstructured(module, "weight", 0.3)
        lib.ln_structured(module, "weight", 2, n=1, dim=0)
        lib.l1_unstructured(module, "weight", 20)
        lib.ln_structured(module, "weight", 1, n=2, dim=1)
    assert_same_masks(ours, theirs)
    hooks = list(ours._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(m).__name__ for m in hooks[0]] == ["L1Unstructured", "LnStructured", "L1Unstructured",
                                                    "LnStructured"]


@pytest.mark.parametrize("values", ["tied", "normal"])
@pytest.mark.parametrize("amount", [0.5, 0.9, 25])
def test_global_unstructured_gives_torchs_masks(values, amount):
    pairs = [conv_pair(values, seed=seed, shape=(3, 2, 3, 3)) for seed in range(2)]
    our_net, their_net = ember.nn.Sequential(*[p[0] for p in pairs]), torch.nn.Sequential(*[p[1] for p in pairs])
    prune.l1_unstructured(our_net[1], "weight", 5)  # an earlier mask the global pass must respect
    torch_prune.l1_unstructured(their_net[1], "weight", 5)
    prune.global_unstructured([(m, "weight") for m in our_net] + [(our_net[0], "bias")],
                              pruning_method=prune.L1Unstructured, amount=amount)
    torch_prune.global_unstructured([(m, "weight") for m in their_net] + [(their_net[0], "bias")],
                                    pruning_method=torch_prune.L1Unstructured, amount=amount)
    assert_same_masks(our_net, their_net)


def test_global_unstructured_refuses_structured_methods_like_torch():
    ours, _ = linear_pair(3, 2)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(ours, "weight")], pruning_method=prune.LnStructured, amount=1, n=1)
    with pytest.raises(TypeError, match="not an Iterable"):
        prune.global_unstructured(5, pruning_method=prune.L1Unstructured, amount=1)


def test_importance_scores_choose_the_mask():
    ours, theirs = linear_pair(6, 4)
    scores = np.random.default_rng(3).standard_normal((4, 6)).astype("float32")
    prune.l1_unstructured(ours, "weight", 10, importance_scores=ember.tensor(scores))
    torch_prune.l1_unstructured(theirs, "weight", 10, importance_scores=torch.tensor(scores))
    assert_same_masks(ours, theirs)
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(ours, "bias", 1, importance_scores=ember.ones(3))


def test_custom_from_mask_and_identity():
    ours, theirs = linear_pair(3, 3)
    prune.custom_from_mask(ours, "bias", ember.tensor([0, 1, 0]))
    torch_prune.custom_from_mask(theirs, "bias", torch.tensor([0, 1, 0]))
    prune.identity(ours, "weight")
    torch_prune.identity(theirs, "weight")
    assert_same_masks(ours, theirs)
    np.testing.assert_array_equal(ours.bias.detach().numpy(), theirs.bias.detach().numpy())


@pytest.mark.parametrize("method, kwargs", [("random_unstructured", {}), ("random_structured", {"dim": 0})])
@pytest.mark.parametrize("amount", [0, 2, 0.5, 1.0])
def test_random_methods_prune_torchs_count_on_top_of_the_old_mask(method, kwargs, amount):
    """ember's generator differs from torch's, so the masks differ; the counts must not."""
    ours, theirs = conv_pair()
    prune.l1_unstructured(ours, "weight", 30)
    torch_prune.l1_unstructured(theirs, "weight", 30)
    earlier = ours.weight_mask.numpy().copy()
    getattr(prune, method)(ours, "weight", amount, **kwargs)
    getattr(torch_prune, method)(theirs, "weight", amount, **kwargs)
    our_mask, their_mask = ours.weight_mask.numpy(), theirs.weight_mask.numpy()
    assert np.all(our_mask[earlier == 0] == 0)
    if method == "random_unstructured":
        assert our_mask.sum() == their_mask.sum()
    else:  # whole channels go, as many as torch's
        def pruned_channels(mask):
            return int((mask.reshape(mask.shape[0], -1).sum(1) == 0).sum())
        assert pruned_channels(our_mask) == pruned_channels(their_mask)


def test_forward_and_gradients_match_torch_and_reach_only_orig():
    ours, theirs = conv_pair()
    prune.l1_unstructured(ours, "weight", 0.4)
    torch_prune.l1_unstructured(theirs, "weight", 0.4)
    x = np.random.default_rng(1).standard_normal((2, 4, 7, 7)).astype("float32")
    ours(ember.tensor(x)).square().sum().backward()
    theirs(torch.tensor(x)).square().sum().backward()
    expected = theirs.weight_orig.grad.numpy()
    # float32 sums over 2*7*7 windows with values near 100: entries that cancel to ~0.1
    # carry the rounding of the large terms, so the tolerance scales with the largest.
    np.testing.assert_allclose(ours.weight_orig.grad.numpy(), expected, rtol=1e-5, atol=1e-6 * abs(expected).max())
    assert np.all(ours.weight_orig.grad.numpy()[ours.weight_mask.numpy() == 0] == 0)
    assert [name for name, _ in ours.named_parameters()] == [name for name, _ in theirs.named_parameters()]


def test_the_hook_recomputes_the_weight_after_an_update_of_orig():
    ours, _ = linear_pair(4, 2)
    prune.l1_unstructured(ours, "weight", 4)
    with ember.no_grad():
        ours.weight_orig.fill_(2.0)
    ours(ember.ones(1, 4))
    np.testing.assert_array_equal(ours.weight.detach().numpy(), 2.0 * ours.weight_mask.numpy())


def test_remove_makes_pruning_permanent_like_torch():
    ours, theirs = linear_pair(5, 4, "tied")
    for lib, module in ((prune, ours), (torch_prune, theirs)):
        lib.l1_unstructured(module, "weight", 0.5)
        lib.remove(module, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours.weight, ember.nn.Parameter) and not ours._forward_pre_hooks
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert not prune.is_pruned(ours)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(ours, "weight")


def test_is_pruned_looks_into_submodules():
    net = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Sequential(ember.nn.Linear(2, 2)))
    assert not prune.is_pruned(net)
    prune.random_unstructured(net[1][0], "bias", 1)
    assert prune.is_pruned(net)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_pruned_torch_state_dict_loads_and_gives_torchs_outputs(dtype):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(4 * 4 * 4, 5)).to(getattr(torch, dtype))
    torch_prune.ln_structured(theirs[0], "weight", 0.5, n=2, dim=0)
    torch_prune.global_unstructured([(theirs[0], "weight"), (theirs[3], "weight")],
                                    pruning_method=torch_prune.L1Unstructured, amount=0.6)
    state = {k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    assert "0.weight_orig" in state and "3.weight_mask" in state
    ours = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Flatten(),
                               ember.nn.Linear(4 * 4 * 4, 5)).to(getattr(ember, dtype))
    prune.identity(ours[0], "weight")
    prune.identity(ours[3], "weight")
    ours.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(dtype)
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)


def test_a_pruned_state_dict_saved_by_ember_loads_into_torch(tmp_path):
    ours, theirs = linear_pair(4, 3)
    prune.l1_unstructured(ours, "weight", 6)
    ember.save(ours.state_dict(), tmp_path / "pruned.pt")
    torch_prune.identity(theirs, "weight")
    theirs.load_state_dict(torch.load(tmp_path / "pruned.pt", weights_only=True))
    x = np.ones((1, 4), dtype="float32")
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(), ours(ember.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_deepcopy_of_a_pruned_module_fails_as_in_torch():
    """``weight`` is a non-leaf until remove(); torch refuses to deepcopy it, and so does ember."""
    ours, theirs = linear_pair(4, 3)
    prune.l1_unstructured(ours, "weight", 6)
    torch_prune.l1_unstructured(theirs, "weight", 6)
    for module in (ours, theirs):
        with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
            copy.deepcopy(module)


@pytest.mark.parametrize("amount, error, message", [
    (-1, ValueError, "should either be a float in the range"),
    (1.5, ValueError, "should either be a float in the range"),
    ("half", TypeError, "Invalid type for amount"),
])
def test_bad_amounts_raise_torchs_errors(amount, error, message):
    ours, theirs = linear_pair(3, 2)
    with pytest.raises(error, match=message):
        prune.l1_unstructured(ours, "weight", amount)
    with pytest.raises(error, match=message):
        torch_prune.l1_unstructured(theirs, "weight", amount)
    assert "weight" in dict(ours.named_parameters())


def test_too_large_a_count_and_a_1d_structured_prune_raise_and_leave_the_module_intact():
    ours, _ = linear_pair(3, 2)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=6"):
        prune.l1_unstructured(ours, "weight", 7)
    assert "weight" in dict(ours.named_parameters()) and "weight_orig" not in dict(ours.named_parameters())
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional"):
        prune.ln_structured(ours, "bias", 1, n=1, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2"):
        prune.ln_structured(ours, "weight", 1, n=1, dim=2)


@pytest.mark.parametrize("values", ["tied", "normal"])
@pytest.mark.parametrize("method", ["l1_unstructured", "ln_structured"])
def test_bfloat16_weights_prune_like_torch(values, method):
    ours, theirs = linear_pair(20, 9, values)
    ours, theirs = ours.to(ember.bfloat16), theirs.to(torch.bfloat16)
    kwargs = {"n": 2, "dim": 0} if method == "ln_structured" else {}
    getattr(prune, method)(ours, "weight", 0.4, **kwargs)
    getattr(torch_prune, method)(theirs, "weight", 0.4, **kwargs)
    assert ours.weight_mask.dtype == ember.bfloat16
    np.testing.assert_array_equal(ours.weight_mask.float().numpy(), theirs.weight_mask.float().numpy())
    np.testing.assert_array_equal(ours.weight.float().detach().numpy(), theirs.weight.float().detach().numpy())
