"""Transforms against torch: forward, inverse, log|det J| (values and gradients), shapes,
the cache, composition and TransformedDistribution."""

import numpy as np
import pytest
import torch
from dist_parity import assert_parity

import ember

RNG = np.random.default_rng(2)

TRANSFORMS = {
    "Exp": (lambda D, x: D.ExpTransform(), RNG.normal(size=(2, 3))),
    "Sigmoid": (lambda D, x: D.SigmoidTransform(), RNG.normal(size=(2, 3)) * 3),
    "Tanh": (lambda D, x: D.TanhTransform(), RNG.normal(size=(2, 3))),
    "Softplus": (lambda D, x: D.SoftplusTransform(), RNG.normal(size=(2, 3))),
    "Affine": (lambda D, x: D.AffineTransform(0.5, -2.0), RNG.normal(size=(2, 3))),
    "Affine.event": (lambda D, x: D.AffineTransform(x[0] * 0 + 1.0, x[0] + 3.0, event_dim=1), RNG.normal(size=(2, 3))),
    "Power": (lambda D, x: D.PowerTransform(x.new_tensor(1.5)), np.abs(RNG.normal(size=(2, 3))) + 0.1),
    "Compose": (lambda D, x: D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.TanhTransform()]),
                RNG.normal(size=(2, 3)) * 0.3),
    "Independent": (lambda D, x: D.IndependentTransform(D.ExpTransform(), 1), RNG.normal(size=(2, 3))),
    "Reshape": (lambda D, x: D.ReshapeTransform((3,), (3, 1)), RNG.normal(size=(2, 3))),
    "Inverse": (lambda D, x: D.ExpTransform().inv, np.abs(RNG.normal(size=(2, 3))) + 0.1),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_forward_inverse_and_log_det(name, dtype):
    build, x = TRANSFORMS[name]
    assert_parity(lambda lib, D, x: build(D, x)(x), {"x": x}, dtype)
    assert_parity(lambda lib, D, x: build(D, x).inv(build(D, x)(x).detach()), {"x": x}, dtype, scale=100)
    assert_parity(lambda lib, D, x: build(D, x).log_abs_det_jacobian(x, build(D, x)(x)), {"x": x}, dtype,
                  scale=10)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_shapes_signs_and_constraints(name):
    build, x = TRANSFORMS[name]
    t_transform = build(torch.distributions, torch.tensor(x))
    e_transform = build(ember.distributions, ember.tensor(x))
    for shape in [(2, 3), (4, 2, 3), (2, 3, 1)]:
        for method in ("forward_shape", "inverse_shape"):
            try:
                expected = tuple(getattr(t_transform, method)(torch.Size(shape)))
            except ValueError:
                with pytest.raises(ValueError):
                    getattr(e_transform, method)(ember.Size(shape))
                continue
            assert tuple(getattr(e_transform, method)(ember.Size(shape))) == expected
    assert repr(e_transform.domain) == repr(t_transform.domain)
    assert repr(e_transform.codomain) == repr(t_transform.codomain)
    assert e_transform.bijective == t_transform.bijective


def test_cache_returns_the_input_of_the_last_output():
    for D, lib in ((torch.distributions, torch), (ember.distributions, ember)):
        t = D.TanhTransform(cache_size=1)
        x = lib.tensor([20.0])
        y = t(x)
        assert t.inv(y) is x  # atanh(tanh(20)) would be inf in float32
        with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
            D.ExpTransform(cache_size=2)


def test_equality_and_repr():
    D = ember.distributions
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0) != D.AffineTransform(1.0, 3.0)
    assert D.ExpTransform().inv == D.ExpTransform().inv
    compose = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)])
    torch_compose = torch.distributions.ComposeTransform([torch.distributions.ExpTransform(),
                                                          torch.distributions.AffineTransform(1.0, 2.0)])
    assert repr(compose) == repr(torch_compose)
    assert repr(D.ExpTransform().inv) == repr(torch.distributions.ExpTransform().inv)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transformed_distribution_matches_torch(dtype):
    def build(D, loc, scale):
        base = D.Independent(D.Normal(loc, scale), 1)
        return D.TransformedDistribution(base, [D.AffineTransform(0.5, 2.0), D.SigmoidTransform()])

    params = {"loc": RNG.normal(size=(2, 3)), "scale": np.abs(RNG.normal(size=(2, 3))) + 0.5}
    value = RNG.uniform(0.1, 0.9, size=(4, 2, 3))
    assert_parity(lambda lib, D, **p: build(D, **p).rsample((4,)), params, dtype, seed=3, scale=10)
    assert_parity(lambda lib, D, **p: build(D, **p).log_prob(lib.tensor(value, dtype=p["loc"].dtype)), params, dtype,
                  scale=10)
    for lib, D in ((torch, torch.distributions), (ember, ember.distributions)):
        d = build(D, lib.zeros(2, 3), lib.ones(2, 3))
        assert (tuple(d.batch_shape), tuple(d.event_shape)) == ((2,), (3,))
        assert repr(d.support) == "IndependentConstraint(Interval(lower_bound=0.0, upper_bound=1.0), 1)"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transformed_cdf_and_icdf_follow_the_sign(dtype):
    def build(D, loc, scale):
        return D.TransformedDistribution(D.Normal(loc, scale), [D.AffineTransform(1.0, -2.0), D.ExpTransform()])

    params = {"loc": RNG.normal(size=3), "scale": np.abs(RNG.normal(size=3)) + 0.5}
    assert_parity(lambda lib, D, **p: build(D, **p).cdf(lib.tensor([0.5, 1.0, 2.0], dtype=p["loc"].dtype)),
                  params, dtype)
    assert_parity(lambda lib, D, **p: build(D, **p).icdf(lib.tensor([0.2, 0.5, 0.7], dtype=p["loc"].dtype)),
                  params, dtype, scale=10)
