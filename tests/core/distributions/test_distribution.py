"""The Distribution protocol against torch: shapes, expand, validation and its messages,
the probs/logits parameterisations, enumerate_support, and the families built from
others (MixtureSameFamily, RelaxedBernoulli, OneHotCategoricalStraightThrough)."""

import numpy as np
import pytest
import torch
from dist_parity import assert_parity

import ember

LIBS = [(torch, torch.distributions), (ember, ember.distributions)]


def _both(fn):
    """``fn(lib, D)`` on torch and ember: (torch's result, ember's)."""
    return [fn(lib, D) for lib, D in LIBS]


def _same_error(fn, error=ValueError):
    messages = []
    for lib, D in LIBS:
        with pytest.raises(error) as info:
            fn(lib, D)
        messages.append(str(info.value).replace("torch.", "ember."))
    assert messages[1] == messages[0]


BUILDS = {
    "Normal": lambda lib, D: D.Normal(lib.zeros(2, 1), lib.ones(3)),
    "Categorical": lambda lib, D: D.Categorical(logits=lib.zeros(2, 3, 4)),
    "OneHotCategorical": lambda lib, D: D.OneHotCategorical(probs=lib.ones(3, 4)),
    "Bernoulli": lambda lib, D: D.Bernoulli(0.3),
    "MultivariateNormal": lambda lib, D: D.MultivariateNormal(lib.zeros(2, 3), scale_tril=lib.eye(3)),
    "Independent": lambda lib, D: D.Independent(D.Normal(lib.zeros(2, 3, 4), 1.0), 2),
    "Dirichlet": lambda lib, D: D.Dirichlet(lib.ones(2, 5)),
    "Mixture": lambda lib, D: D.MixtureSameFamily(D.Categorical(logits=lib.zeros(2, 3)),
                                                  D.Normal(lib.zeros(2, 3), lib.ones(2, 3))),
    "LogNormal": lambda lib, D: D.LogNormal(lib.zeros(3), 1.0),
    "Binomial": lambda lib, D: D.Binomial(lib.tensor([3.0, 4.0]), probs=lib.tensor(0.5)),
}


@pytest.mark.parametrize("name", BUILDS)
def test_shapes_expand_and_repr(name):
    t_dist, e_dist = _both(BUILDS[name])
    assert tuple(e_dist.batch_shape) == tuple(t_dist.batch_shape)
    assert tuple(e_dist.event_shape) == tuple(t_dist.event_shape)
    assert repr(e_dist).replace("ember.", "torch.") == repr(t_dist)
    assert e_dist.has_rsample == t_dist.has_rsample
    assert e_dist.has_enumerate_support == t_dist.has_enumerate_support
    new_batch = (5,) + tuple(t_dist.batch_shape)
    t_new, e_new = t_dist.expand(new_batch), e_dist.expand(ember.Size(new_batch))
    assert type(e_new) is type(e_dist)
    assert tuple(e_new.batch_shape) == tuple(t_new.batch_shape)
    assert tuple(e_new.sample((2,)).shape) == tuple(t_new.sample((2,)).shape)
    assert tuple(e_dist.sample().shape) == tuple(t_dist.sample().shape)


def test_invalid_parameters_raise_torchs_message():
    _same_error(lambda lib, D: D.Normal(lib.zeros(2), -lib.ones(2)))
    _same_error(lambda lib, D: D.Bernoulli(probs=lib.tensor([0.5, 1.5])))
    _same_error(lambda lib, D: D.Categorical(probs=lib.tensor([0.5, -0.5])))
    _same_error(lambda lib, D: D.Uniform(lib.tensor([1.0]), lib.tensor([0.0])))
    _same_error(lambda lib, D: D.Categorical())
    _same_error(lambda lib, D: D.Bernoulli(probs=lib.tensor(0.5), logits=lib.tensor(0.0)))
    _same_error(lambda lib, D: D.Categorical(probs=lib.tensor(1.0)))
    _same_error(lambda lib, D: D.MultivariateNormal(lib.zeros(2)))
    _same_error(lambda lib, D: D.MultivariateNormal(lib.zeros(2), scale_tril=-lib.eye(2)))
    _same_error(lambda lib, D: D.Dirichlet(lib.tensor(1.0)))
    _same_error(lambda lib, D: D.Independent(D.Normal(lib.zeros(2), 1.0), 2))


def test_invalid_values_raise_torchs_message():
    _same_error(lambda lib, D: D.Exponential(lib.ones(2)).log_prob(lib.tensor([-1.0, 1.0])))
    _same_error(lambda lib, D: D.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor(3)))
    _same_error(lambda lib, D: D.Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)))
    _same_error(lambda lib, D: D.MultivariateNormal(lib.zeros(3), lib.eye(3)).log_prob(lib.zeros(2)))
    _same_error(lambda lib, D: D.Normal(0.0, 1.0).log_prob(0.5))


def test_validation_can_be_turned_off():
    for lib, D in LIBS:
        d = D.Normal(lib.zeros(1), -lib.ones(1), validate_args=False)
        assert bool(lib.isnan(d.log_prob(lib.zeros(1))).all())
        assert D.Exponential(lib.ones(1), validate_args=False).log_prob(-lib.ones(1)).item() == 1.0
        D.Distribution.set_default_validate_args(False)
        try:
            D.Normal(lib.zeros(1), -lib.ones(1))
        finally:
            D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Distribution.set_default_validate_args(2)


def test_probs_and_logits_are_computed_lazily_and_agree():
    for lib, D in LIBS:
        d = D.Categorical(probs=lib.tensor([1.0, 3.0]))
        assert "logits" not in d.__dict__
        np.testing.assert_allclose(d.logits.numpy(), np.log([0.25, 0.75]), rtol=1e-6)
        b = D.Bernoulli(logits=lib.tensor([0.0]))
        assert "probs" not in b.__dict__ and b.probs.item() == 0.5


@pytest.mark.parametrize("name", ["Categorical", "Bernoulli", "OneHot", "Binomial", "Independent"])
def test_enumerate_support(name):
    builds = {
        "Categorical": lambda lib, D: D.Categorical(logits=lib.zeros(2, 3)),
        "Bernoulli": lambda lib, D: D.Bernoulli(lib.full((2,), 0.3)),
        "OneHot": lambda lib, D: D.OneHotCategorical(logits=lib.zeros(2, 3)),
        "Binomial": lambda lib, D: D.Binomial(3, lib.full((2,), 0.3)),
        "Independent": lambda lib, D: D.Independent(D.Bernoulli(lib.full((2,), 0.3)), 0),
    }
    for expand in (True, False):
        t_values, e_values = _both(lambda lib, D: builds[name](lib, D).enumerate_support(expand))
        np.testing.assert_array_equal(e_values.numpy(), t_values.numpy())
        assert str(e_values.dtype).split(".")[-1] == str(t_values.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mixture_same_family(dtype):
    def build(D, logits, loc, scale):
        return D.MixtureSameFamily(D.Categorical(logits=logits), D.Independent(D.Normal(loc, scale), 1))

    rng = np.random.default_rng(3)
    params = {"logits": rng.normal(size=(2, 3)), "loc": rng.normal(size=(2, 3, 4)),
              "scale": np.abs(rng.normal(size=(2, 3, 4))) + 0.5}
    value = rng.normal(size=(5, 2, 4))
    assert_parity(lambda lib, D, **p: build(D, **p).log_prob(lib.tensor(value, dtype=p["loc"].dtype)), params, dtype)
    assert_parity(lambda lib, D, **p: build(D, **p).mean, params, dtype)
    assert_parity(lambda lib, D, **p: build(D, **p).variance, params, dtype)
    assert_parity(lambda lib, D, **p: build(D, **p).sample((5,)), params, dtype, seed=4, requires_grad=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relaxed_and_straight_through(dtype):
    rng = np.random.default_rng(4)
    params = {"temperature": np.array(0.7), "logits": rng.normal(size=(2, 3))}
    assert_parity(lambda lib, D, temperature, logits: D.RelaxedBernoulli(temperature, logits=logits).rsample((4,)),
                  params, dtype, seed=5, scale=10)
    value = rng.uniform(0.1, 0.9, size=(4, 2, 3))
    assert_parity(lambda lib, D, temperature, logits: D.RelaxedBernoulli(temperature, logits=logits).log_prob(
        lib.tensor(value, dtype=logits.dtype)), params, dtype, scale=10)
    assert_parity(lambda lib, D, logits: D.OneHotCategoricalStraightThrough(logits=logits).rsample((3,)),
                  {"logits": rng.normal(size=(2, 4))}, dtype, seed=6)


def test_perplexity_and_stddev():
    t_value, e_value = _both(lambda lib, D: D.Categorical(probs=lib.tensor([0.2, 0.3, 0.5])).perplexity())
    np.testing.assert_allclose(e_value.numpy(), t_value.numpy(), rtol=1e-6)
    t_value, e_value = _both(lambda lib, D: D.Gamma(lib.tensor([2.0]), lib.tensor([3.0])).stddev)
    np.testing.assert_allclose(e_value.numpy(), t_value.numpy(), rtol=1e-6)
