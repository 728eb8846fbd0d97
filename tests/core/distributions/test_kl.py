"""kl_divergence against torch for every registered pair (values and gradients), and the
registry's dispatch: most specific pair, ambiguity warning, missing pair error."""

import warnings

import numpy as np
import pytest
import torch
from dist_parity import assert_parity

import ember

RNG = np.random.default_rng(1)


def _positive(*shape):
    return np.abs(RNG.normal(size=shape)) + 0.5


def _unit(*shape):
    return RNG.uniform(0.05, 0.95, size=shape)


def _tril(batch, n):
    return np.tril(RNG.normal(size=(batch, n, n))) + n * np.eye(n)


PAIRS = {
    "Normal": (lambda D, a, b, c, d: (D.Normal(a, b), D.Normal(c, d)),
               {"a": RNG.normal(size=(2, 1)), "b": _positive(3), "c": RNG.normal(size=3), "d": _positive(2, 1)}),
    "Laplace": (lambda D, a, b, c, d: (D.Laplace(a, b), D.Laplace(c, d)),
                {"a": RNG.normal(size=(2, 1)), "b": _positive(3), "c": RNG.normal(size=3), "d": _positive(2, 1)}),
    "Exponential": (lambda D, a, b: (D.Exponential(a), D.Exponential(b)), {"a": _positive(2, 3), "b": _positive(3)}),
    "Uniform": (lambda D, a, b: (D.Uniform(a, a + 1), D.Uniform(b - 3, b + 3)),
                {"a": RNG.normal(size=(2, 3)), "b": RNG.normal(size=3) * 0.1}),
    "Uniform.outside": (lambda D, a, b: (D.Uniform(a, a + 1), D.Uniform(b, b + 0.5)),
                        {"a": RNG.normal(size=(2, 3)), "b": RNG.normal(size=3)}),
    "Bernoulli": (lambda D, a, b: (D.Bernoulli(probs=a), D.Bernoulli(logits=b)),
                  {"a": _unit(2, 3), "b": RNG.normal(size=(2, 3))}),  # torch's masks need equal shapes
    "Categorical": (lambda D, a, b: (D.Categorical(probs=a), D.Categorical(logits=b)),
                    {"a": _unit(2, 3, 4), "b": RNG.normal(size=(3, 4))}),
    "OneHotCategorical": (lambda D, a, b: (D.OneHotCategorical(probs=a), D.OneHotCategorical(logits=b)),
                          {"a": _unit(2, 4), "b": RNG.normal(size=4)}),
    "Independent": (lambda D, a, b, c, d: (D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, d), 1)),
                    {"a": RNG.normal(size=(2, 3)), "b": _positive(2, 3), "c": RNG.normal(size=3), "d": _positive(3)}),
    "LogNormal": (lambda D, a, b, c, d: (D.LogNormal(a, b), D.LogNormal(c, d)),
                  {"a": RNG.normal(size=3), "b": _positive(3), "c": RNG.normal(size=3), "d": _positive(3)}),
    "Normal.Laplace": (lambda D, a, b, c, d: (D.Normal(a, b), D.Laplace(c, d)),
                       {"a": RNG.normal(size=3), "b": _positive(3), "c": RNG.normal(size=3), "d": _positive(3)}),
    "Uniform.Normal": (lambda D, a, c, d: (D.Uniform(a, a + 2), D.Normal(c, d)),
                       {"a": RNG.normal(size=3), "c": RNG.normal(size=3), "d": _positive(3)}),
    "Gamma": (lambda D, a, b, c, d: (D.Gamma(a, b), D.Gamma(c, d)),
              {"a": _positive(2, 1), "b": _positive(3), "c": _positive(3), "d": _positive(2, 1)}),
    "Beta": (lambda D, a, b, c, d: (D.Beta(a, b), D.Beta(c, d)),
             {"a": _positive(2, 1), "b": _positive(3), "c": _positive(3), "d": _positive(2, 1)}),
    "Dirichlet": (lambda D, a, b: (D.Dirichlet(a), D.Dirichlet(b)), {"a": _positive(2, 4), "b": _positive(4)}),
    "Poisson": (lambda D, a, b: (D.Poisson(a), D.Poisson(b)), {"a": _positive(2, 3), "b": _positive(3)}),
    "Binomial": (lambda D, a, b: (D.Binomial(6, probs=a), D.Binomial(6, probs=b)),
                 {"a": _unit(2, 3), "b": _unit(3)}),
    "MultivariateNormal": (lambda D, a, b, c, d: (D.MultivariateNormal(a, scale_tril=b),
                                                  D.MultivariateNormal(c, scale_tril=d)),
                           {"a": RNG.normal(size=(2, 1, 3)), "b": _tril(2, 3), "c": RNG.normal(size=3),
                            "d": _tril(1, 3)}),
}
_SPECIAL = {"Gamma", "Beta", "Dirichlet"}  # gradients through trigamma (see test_families)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pair", PAIRS)
def test_kl_divergence_matches_torch(pair, dtype):
    build, params = PAIRS[pair]
    scale = 1e3 if pair in _SPECIAL and dtype == "float64" else 1.0
    assert_parity(lambda lib, D, **p: D.kl_divergence(*build(D, **p)), params, dtype, scale=scale)


def test_missing_pair_raises_torchs_error():
    for D, lib in ((torch.distributions, torch), (ember.distributions, ember)):
        with pytest.raises(NotImplementedError) as info:
            D.kl_divergence(D.Categorical(lib.ones(2)), D.Normal(0.0, 1.0))
        assert str(info.value) == "No KL(p || q) is implemented for p type Categorical and q type Normal"


def test_registered_subclass_pair_wins_and_ambiguity_warns():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return ember.tensor(123.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 123.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0

    @D.register_kl(D.Normal, MyNormal)
    def _theirs(p, q):
        return ember.tensor(456.0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 123.0
    assert "Ambiguous kl_divergence(MyNormal, MyNormal). Please register_kl(MyNormal, MyNormal)" in str(
        caught[0].message)


def test_register_kl_refuses_non_distributions():
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        ember.distributions.register_kl(int, ember.distributions.Normal)
