"""kl_div (ember_loss/kl_div.py) against PyTorch: every reduction incl. 'batchmean',
log_target, float32/float64, input and target gradients, zeros in the target, the
warning on 'mean', gradcheck."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity

REDUCTIONS = ["none", "batchmean", "sum", "mean"]


def distribution(shape, dtype, seed):
    p = np.random.default_rng(seed).uniform(0.05, 1, size=shape)
    return np.asarray(p / p.sum(axis=-1, keepdims=True), dtype=dtype)


def kl(**kwargs):
    return lambda lib, x, t: lib.nn.functional.kl_div(x, t, **kwargs)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, shape, reduction, log_target):
    x = np.log(distribution(shape, dtype, 1))
    t = distribution(shape, dtype, 2)
    if log_target:
        t = np.log(t)
    assert_parity(kl(reduction=reduction, log_target=log_target), x, t)  # target gradients compared too


def test_zero_target_entries_contribute_nothing():
    x = np.log(distribution((3, 4), "float64", 1))
    t = distribution((3, 4), "float64", 2)
    t[0, 1] = t[2, 3] = 0.0
    fn = lambda lib, x: lib.nn.functional.kl_div(x, lib.tensor(t), reduction="batchmean")
    assert_parity(fn, x)


def test_mean_warns_like_torch():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        ember.nn.functional.kl_div(ember.zeros(3), ember.ones(3) / 3)


def test_zero_dim_batchmean_and_bad_reduction():
    assert_parity(kl(reduction="batchmean"), np.array(-1.0), np.array(0.5))
    assert_parity(kl(reduction="average"), np.zeros(3), np.ones(3))


def test_gradcheck():
    x = ember.tensor(np.log(distribution((3, 4), "float64", 1))).requires_grad_()
    t = ember.tensor(distribution((3, 4), "float64", 2)).requires_grad_()
    assert gradcheck(lambda x, t: ember.nn.functional.kl_div(x, t, reduction="batchmean"), (x, t))
    assert gradcheck(lambda x, t: ember.nn.functional.kl_div(x, t.log(), reduction="sum", log_target=True), (x, t))


def test_target_gradient_at_zero_is_nan_like_torch():
    t = np.array([0.0, 0.25, 0.75])
    assert_parity(kl(reduction="sum"), np.log(np.array([0.2, 0.3, 0.5])), t)
