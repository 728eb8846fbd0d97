"""dropout3d, alpha_dropout and feature_alpha_dropout (and Dropout3d, AlphaDropout,
FeatureAlphaDropout): random, so compared with torch by shape, dtype, statistics and the
values torch's formula gives for the drawn mask; reproducible under ember.manual_seed."""

import math

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

ALPHA_PRIME = 1.7580993408473766


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_keeps_mean_and_variance_and_follows_torchs_formula(p, dtype):
    ember.manual_seed(0)
    x = ember.randn(200000, dtype=dtype, requires_grad=True)
    y = ember.nn.functional.alpha_dropout(x, p, training=True)
    assert y.dtype == dtype and y.shape == x.shape
    assert abs(float(y.mean())) < 0.01 and abs(float(y.std()) - 1) < 0.01
    a = 1 / math.sqrt((ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    kept = (y.detach() != -ALPHA_PRIME * a + ALPHA_PRIME * a * p)
    expected = ember.where(kept, x.detach() * a + ALPHA_PRIME * a * p, ember.full_like(x, -a * ALPHA_PRIME * (1 - p)))
    assert_close(y.detach(), torch.tensor(expected.numpy()))
    assert abs(float(kept.float().mean()) - (1 - p)) < 0.01
    y.sum().backward()
    assert_close(x.grad, torch.tensor(np.where(kept.numpy(), a, 0.0).astype(x.grad.numpy().dtype)))


def test_feature_alpha_dropout_drops_whole_channels_and_is_reproducible():
    x = ember.randn(8, 16, 5, 5)
    ember.manual_seed(3)
    first = ember.nn.functional.feature_alpha_dropout(x, 0.5, training=True)
    ember.manual_seed(3)
    second = ember.nn.functional.feature_alpha_dropout(x, 0.5, training=True)
    assert (first == second).all()
    a = 1 / math.sqrt((ALPHA_PRIME ** 2 * 0.5 + 1) * 0.5)
    dropped = (first == -a * ALPHA_PRIME * 0.5).flatten(2)
    assert bool((dropped.all(-1) | ~dropped.any(-1)).all())  # a channel is dropped whole or not at all
    assert 0 < float(dropped.all(-1).float().mean()) < 1


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout", "dropout3d"])
def test_identity_cases_and_p_one_as_torch(name):
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2, 2)).astype(np.float32)
    e_fn, t_fn = getattr(ember.nn.functional, name), getattr(torch.nn.functional, name)
    e_x = ember.tensor(x)
    assert e_fn(e_x, 0.5, training=False) is e_x
    assert e_fn(e_x, 0.0, training=True) is e_x
    assert_close(e_fn(e_x, 1.0, training=True), t_fn(torch.tensor(x), 1.0, training=True))
    with pytest.raises(ValueError) as expected:
        t_fn(torch.tensor(x), 1.5)
    with pytest.raises(ValueError) as actual:
        e_fn(e_x, 1.5)
    assert str(actual.value) == str(expected.value)


def test_dropout3d_channels_unbatched_and_warning():
    ember.manual_seed(1)
    y = ember.nn.functional.dropout3d(ember.ones(4, 8, 3, 3, 3), 0.5)
    per_channel = y.flatten(2)
    assert bool((per_channel == per_channel[..., :1]).all())
    assert set(y.flatten().tolist()) <= {0.0, 2.0}
    assert ember.nn.functional.dropout3d(ember.ones(8, 3, 3, 3), 0.5).shape == (8, 3, 3, 3)
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input"):
        ember.nn.functional.dropout3d(ember.ones(8, 3, 3), 0.5)


@pytest.mark.parametrize("name", ["Dropout3d", "AlphaDropout", "FeatureAlphaDropout"])
def test_modules(name):
    e_module, t_module = getattr(ember.nn, name)(0.3), getattr(torch.nn, name)(0.3)
    assert repr(e_module) == repr(t_module)
    x = ember.randn(2, 3, 2, 2, 2)
    assert e_module.eval()(x) is x
    assert e_module.train()(x).shape == x.shape
