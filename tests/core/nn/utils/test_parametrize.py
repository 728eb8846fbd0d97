"""Parametrizations (ember.nn.utils.parametrize / parametrizations) and the legacy
weight_norm against torch: state-dict keys, values and gradients after the same seed,
assignment through right_inverse, caching, removal, and torch's errors."""

import warnings

import numpy as np
import pytest
import torch

import ember


def _params(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


def _same_state(e, t, rtol=1e-6):
    te, tt = _params(e), _params(t)
    assert te.keys() == tt.keys()
    for k in tt:
        np.testing.assert_allclose(te[k], tt[k], rtol=rtol, atol=1e-6, err_msg=k)


def _trained_pair(build, apply, steps=3, train=True):
    """The same module in both libraries, parametrized, a few SGD steps: its state."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        module = build(lib)
        lib.manual_seed(1)
        apply(lib, module)
        module.train(train)
        opt = lib.optim.SGD(module.parameters(), lr=0.1)
        x = lib.tensor(np.random.default_rng(0).standard_normal((4, 3, 5, 5)).astype(np.float32)) \
            if isinstance(module, lib.nn.Conv2d) else lib.tensor(np.random.default_rng(0).standard_normal(
                (4, 6)).astype(np.float32))
        for _ in range(steps):
            opt.zero_grad()
            (module(x) ** 2).mean().backward()
            opt.step()
        out.append(module)
    return out


BUILDS = {"linear": lambda lib: lib.nn.Linear(6, 4), "conv": lambda lib: lib.nn.Conv2d(3, 4, 3)}


@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_trains_as_torchs(build, dim):
    t, e = _trained_pair(build, lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=dim))
    assert type(e).__name__ == type(t).__name__ == f"Parametrized{type(t).__bases__[0].__name__}"
    _same_state(e, t, rtol=1e-5)


@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_trains_as_torchs(build, train):
    t, e = _trained_pair(build, lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m), train=train)
    _same_state(e, t, rtol=1e-5)  # the power iteration's u and v included


def test_assignment_goes_through_right_inverse_and_caching():
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        target = lib.arange(6.0).view(2, 3)
        m.weight = target
        assert np.allclose(m.weight.detach().numpy(), target.numpy(), atol=1e-6)
        with lib.nn.utils.parametrize.cached():
            assert m.weight is m.weight
        assert m.weight is not m.weight


class Symmetric:
    @staticmethod
    def of(lib):
        class Sym(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(0, 1)

        return Sym()


@pytest.mark.parametrize("leave", [True, False])
def test_register_and_remove_a_custom_parametrization(leave):
    states = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 3)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", Symmetric.of(lib))
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
        w = m.weight.detach().numpy()
        assert np.allclose(w, w.T)
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        assert type(m) is lib.nn.Linear and not P.is_parametrized(m)
        states.append(_params(m))
    for k in states[0]:
        np.testing.assert_allclose(states[1][k], states[0][k], rtol=1e-6)


def test_torchs_errors():
    for lib in (torch, ember):
        m = lib.nn.Linear(3, 3)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            lib.nn.utils.parametrize.register_parametrization(m, "nothing", Symmetric.of(lib))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            lib.nn.utils.parametrize.remove_parametrizations(m, "weight")

        class Shrink(lib.nn.Module):
            def forward(self, x):
                return x[:2]

        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            lib.nn.utils.parametrize.register_parametrization(m, "weight", Shrink())


def test_legacy_weight_norm_as_torchs():
    states = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Linear(4, 3)
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            lib.nn.utils.weight_norm(m, dim=0)
        x = lib.ones(2, 4)
        (m(x) ** 2).sum().backward()
        states.append((sorted(_params(m)), m.weight_g.grad.numpy(), m.weight_v.grad.numpy()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.remove_weight_norm(m)
        assert sorted(_params(m)) == ["bias", "weight"]
    assert states[0][0] == states[1][0]
    np.testing.assert_allclose(states[1][1], states[0][1], rtol=1e-5)
    np.testing.assert_allclose(states[1][2], states[0][2], rtol=1e-5)
