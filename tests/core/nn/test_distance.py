"""nn.PairwiseDistance and nn.CosineSimilarity against torch: values, gradients, repr, and
their attributes."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


@pytest.mark.parametrize("name,kwargs", [("PairwiseDistance", {}), ("PairwiseDistance", {"p": 1.0, "keepdim": True}),
                                         ("PairwiseDistance", {"p": 3, "eps": 0.0}), ("CosineSimilarity", {}),
                                         ("CosineSimilarity", {"dim": 0, "eps": 1e-3})])
@pytest.mark.parametrize("shape", [(5, 4), (2, 5, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_module_matches_torch(name, kwargs, shape, dtype):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    e_a, e_b = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    t_a, t_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    e_module, t_module = getattr(ember.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    e_out, t_out = e_module(e_a, e_b), t_module(t_a, t_b)
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}
    assert_close(e_out, t_out, **tol)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(e_a.grad, t_a.grad, **tol)
    assert_close(e_b.grad, t_b.grad, **tol)
    assert repr(e_module) == repr(t_module)
    for attribute in ("norm", "eps", "keepdim", "dim"):
        assert getattr(e_module, attribute, None) == getattr(t_module, attribute, None)


def test_module_path_is_torchs():
    from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance

    assert PairwiseDistance is ember.nn.PairwiseDistance
    assert CosineSimilarity is ember.nn.CosineSimilarity
