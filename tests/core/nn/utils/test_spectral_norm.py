"""The legacy ``nn.utils.spectral_norm`` hook (ember/nn/utils/spectral_norm.py) against
torch's: the state-dict keys (weight_orig, weight_u, weight_v), u and v after the same
seed, power iterations in training and none in eval, values after SGD steps,
``remove_spectral_norm``, loading torch's state dicts (today's and pre-version-1 ones),
and torch's errors."""

import collections

import numpy as np
import pytest
import torch

import ember


def _state(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


def _builders():
    return {
        "linear": lambda lib: lib.nn.Linear(6, 4),
        "conv": lambda lib: lib.nn.Conv2d(3, 4, 3),
        "conv_transpose": lambda lib: lib.nn.ConvTranspose2d(3, 4, 3),  # dim 1
    }


def _input(lib, module):
    rng = np.random.default_rng(0)
    if isinstance(module, lib.nn.Linear):
        return lib.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    return lib.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))


def _pair(kind, **kwargs):
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        module = _builders()[kind](lib)
        lib.manual_seed(1)
        lib.nn.utils.spectral_norm(module, **kwargs)
        out.append(module)
    return out


def _same(ours, theirs, atol=1e-5):
    expected = _state(theirs)
    got = _state(ours)
    assert list(got) == list(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], atol=atol, err_msg=key)


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_transpose"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_trains_as_torchs(kind, n_power_iterations):
    theirs, ours = _pair(kind, n_power_iterations=n_power_iterations)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "weight_orig" in ours.state_dict() and "weight" not in ours.state_dict()
    _same(ours, theirs, atol=1e-6)
    for lib, module in ((torch, theirs), (ember, ours)):
        opt = lib.optim.SGD(module.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            module(_input(lib, module)).square().mean().backward()
            opt.step()
    _same(ours, theirs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-5)


def test_eval_forward_leaves_u_and_v_as_torchs():
    theirs, ours = _pair("linear")
    for lib, module in ((torch, theirs), (ember, ours)):
        module.eval()
        before = module.weight_u.clone()
        module(_input(lib, module))
        assert lib.equal(module.weight_u, before)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-6)


def test_remove_spectral_norm_as_torchs():
    theirs, ours = _pair("linear")
    for lib, module in ((torch, theirs), (ember, ours)):
        module(_input(lib, module))
        lib.nn.utils.remove_spectral_norm(module)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, ember.nn.Parameter) and not ours._forward_pre_hooks
    _same(ours, theirs, atol=1e-6)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        ember.nn.utils.remove_spectral_norm(ours)


def test_loading_torchs_state_dict_and_an_old_one():
    theirs, ours = _pair("linear")
    theirs(_input(torch, theirs))
    ours.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    _same(ours, theirs, atol=0)
    # a pre-version-1 state dict: weight (normalised) and weight_u, no weight_v; v is solved
    # for through a pseudo-inverse of W^T W, so a tall float64 weight keeps it well posed
    pair = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        pair.append(lib.nn.utils.spectral_norm(lib.nn.Linear(3, 6).double()))
    source = pair[0]
    source(torch.randn(2, 3, dtype=torch.float64))
    old = collections.OrderedDict((k, v) for k, v in source.state_dict().items() if k != "weight_v")
    old["weight"] = source.weight.detach().clone()
    old._metadata = collections.OrderedDict({"": {"version": 1}})
    fresh_theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 6).double())
    fresh_theirs.load_state_dict(old)
    old_ours = collections.OrderedDict((k, ember.tensor(v.numpy())) for k, v in old.items())
    old_ours._metadata = old._metadata
    pair[1].load_state_dict(old_ours)
    _same(pair[1], fresh_theirs, atol=1e-10)
    assert "weight_v" in fresh_theirs.state_dict()


def test_errors_as_torchs():
    for lib in (torch, ember):
        module = lib.nn.Linear(2, 2)
        lib.nn.utils.spectral_norm(module)
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
            lib.nn.utils.spectral_norm(module)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                             "n_power_iterations=0"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
