"""pairwise_distance, cosine_similarity, pdist and normalize against torch: values and
gradients in float32 and float64, broadcast, batched, unbatched, non-contiguous and empty
inputs, and the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


def _pair(shape, dtype, seed, requires_grad=True):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(x, requires_grad=requires_grad), torch.tensor(x, requires_grad=requires_grad)


def _check(name, shapes, dtype, **kwargs):
    """``F.<name>`` on the same inputs in both libraries: the result, then each input's
    gradient for one random cotangent."""
    pairs = [_pair(shape, dtype, seed) for seed, shape in enumerate(shapes)]
    e_out = getattr(ember.nn.functional, name)(*[e for e, _ in pairs], **kwargs)
    t_out = getattr(torch.nn.functional, name)(*[t for _, t in pairs], **kwargs)
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}
    assert_close(e_out, t_out, **tol)
    cotangent = np.random.default_rng(9).standard_normal(tuple(t_out.shape)).astype(dtype)
    (e_out * ember.tensor(cotangent)).sum().backward()
    (t_out * torch.tensor(cotangent)).sum().backward()
    for e, t in pairs:
        assert_close(e.grad, t.grad, **tol)


DTYPES = [np.float32, np.float64]
P_VALUES = [0, 0.5, 1, 1.5, 2, 3, float("inf"), -1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", P_VALUES)
@pytest.mark.parametrize("shapes", [((5, 4), (5, 4)), ((4,), (4,)), ((2, 3, 4), (3, 4)), ((5, 1), (5, 4)), ((), ())])
def test_pairwise_distance(shapes, p, dtype):
    _check("pairwise_distance", shapes, dtype, p=p)
    _check("pairwise_distance", shapes, dtype, p=p, eps=0.5, keepdim=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,dim", [(((5, 4), (5, 4)), 1), (((4,), (4,)), 0), (((2, 3, 4), (3, 4)), -1),
                                        (((3, 1, 4), (1, 2, 4)), 2), (((6, 3), (6, 3)), 0), (((), ()), 0)])
def test_cosine_similarity(shapes, dim, dtype):
    _check("cosine_similarity", shapes, dtype, dim=dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cosine_similarity_clamps_small_norms_as_torch(dtype):
    # A norm under eps is raised to eps, while the gradient flows as though unclamped
    # (NOTE [ cosine_similarity's clamped norm ]).
    x = (np.random.default_rng(0).standard_normal((3, 4)) * 1e-9).astype(dtype)
    y = np.random.default_rng(1).standard_normal((3, 4)).astype(dtype)
    e_x, e_y = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)
    t_x, t_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    e_out = ember.nn.functional.cosine_similarity(e_x, e_y, eps=1e-6)
    t_out = torch.nn.functional.cosine_similarity(t_x, t_y, eps=1e-6)
    assert_close(e_out, t_out)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(e_x.grad, t_x.grad)
    assert_close(e_y.grad, t_y.grad)


def test_cosine_similarity_promotes_like_torch():
    ints = np.arange(12).reshape(3, 4)
    floats = np.linspace(-1, 1, 12).reshape(3, 4)
    for a, b in ((ints, floats.astype(np.float32)), (floats.astype(np.float32), floats), (floats, ints)):
        e = ember.nn.functional.cosine_similarity(ember.tensor(a), ember.tensor(b))
        t = torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b))
        assert_close(e, t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
@pytest.mark.parametrize("shape", [(6, 3), (2, 5), (1, 4), (4, 0)])
def test_pdist(shape, p, dtype):
    _check("pdist", [shape], dtype, p=p)


def test_pdist_of_no_rows():
    # torch 2.13's backward crashes the process on a (0, M) input, so only the forward is
    # compared; ember's gradient is the empty one of the input's shape.
    e_x = ember.zeros(0, 3, requires_grad=True)
    e_out, t_out = ember.nn.functional.pdist(e_x), torch.nn.functional.pdist(torch.zeros(0, 3))
    assert_close(e_out, t_out)
    e_out.sum().backward()
    assert tuple(e_x.grad.shape) == (0, 3)


@pytest.mark.parametrize("p", [0.5, 1, 2, 3, float("inf")])
def test_pdist_gradient_of_repeated_rows(p):
    # Equal rows are at distance zero: torch's backward gives them no gradient from that
    # pair, and ember's does the same.
    x = np.random.default_rng(3).standard_normal((5, 3))
    x[3] = x[1]
    e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e_out, t_out = ember.nn.functional.pdist(e_x, p), torch.nn.functional.pdist(t_x, p)
    assert_close(e_out, t_out)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(e_x.grad, t_x.grad)


def test_pdist_non_contiguous_and_top_level():
    x = np.random.default_rng(4).standard_normal((4, 7))
    assert_close(ember.pdist(ember.tensor(x).T), torch.pdist(torch.tensor(x).T))
    assert_close(ember.pairwise_distance(ember.tensor(x).T, ember.tensor(x[:, ::-1].copy()).T),
                 torch.pairwise_distance(torch.tensor(x).T, torch.tensor(x[:, ::-1].copy()).T))
    assert_close(ember.cosine_similarity(ember.tensor(x).T, ember.tensor(x).T, dim=0),
                 torch.cosine_similarity(torch.tensor(x).T, torch.tensor(x).T, dim=0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p,dim", [(2, 1), (1, 0), (3, -1), (float("inf"), 1), (0.5, 1)])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (0, 3)])
def test_normalize(shape, p, dim, dtype):
    _check("normalize", [shape], dtype, p=p, dim=dim)


def test_normalize_zero_vector_and_out():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e_y, t_y = ember.nn.functional.normalize(e_x), torch.nn.functional.normalize(t_x)
    assert_close(e_y, t_y)
    e_y.sum().backward()
    t_y.sum().backward()
    assert_close(e_x.grad, t_x.grad)
    out = ember.empty(2, 2, dtype=ember.float64)
    result = ember.nn.functional.normalize(ember.tensor(x), out=out)
    assert result is out
    assert_close(out, torch.nn.functional.normalize(torch.tensor(x)))


@pytest.mark.parametrize("call", [
    lambda F, lib: F.pdist(lib.ones(3, 4, 2)),
    lambda F, lib: F.pdist(lib.ones(3, 4, dtype=lib.int64)),
    lambda F, lib: F.pdist(lib.ones(3, 4), p=-1),
    lambda F, lib: F.cosine_similarity(lib.ones(3, 4, dtype=lib.int64), lib.ones(3, 4, dtype=lib.int64)),
    lambda F, lib: F.cosine_similarity(lib.ones(3, 4), lib.ones(3, 5)),
    lambda F, lib: F.pairwise_distance(lib.ones(3, 4), lib.ones(3, 5)),
    lambda F, lib: F.normalize(lib.ones(3, 4, dtype=lib.int64)),
])
def test_errors_like_torch(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(RuntimeError) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("call", [
    lambda F, lib: F.normalize(lib.ones(3, 4), dim=5),
    lambda F, lib: F.cosine_similarity(lib.ones(4), lib.ones(4)),
])
def test_dim_errors_like_torch(call):
    with pytest.raises(IndexError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(IndexError) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)
