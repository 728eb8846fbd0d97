"""The margin losses (soft_margin, hinge_embedding, multi_margin, multilabel_margin,
multilabel_soft_margin, triplet_margin_with_distance) and their modules against torch:
values and gradients for every reduction, float32 and float64, batched and unbatched, the
errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close

REDUCTIONS = ["none", "mean", "sum"]


def _check(name, make_inputs, dtype, grad_inputs=1, **kwargs):
    """``F.<name>`` in both libraries on the same inputs: the loss and the gradients of
    the first ``grad_inputs`` inputs."""
    arrays = make_inputs(np.random.default_rng(0), dtype)
    results = {}
    for lib in (ember, torch):
        tensors = [lib.tensor(a, requires_grad=i < grad_inputs) for i, a in enumerate(arrays)]
        extra = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
        out = getattr(lib.nn.functional, name)(*tensors, **extra)
        out.sum().backward()
        results[lib] = [out] + [t.grad for t in tensors[:grad_inputs]]
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}
    for e, t in zip(results[ember], results[torch]):
        assert_close(e, t, **tol)


def _pm_one(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4, 5), (6,), ()])
def test_soft_margin_and_hinge_embedding(shape, reduction, dtype):
    def inputs(rng, dtype):
        return rng.standard_normal(shape).astype(dtype), _pm_one(rng, shape).astype(dtype)
    _check("soft_margin_loss", inputs, dtype, reduction=reduction)
    _check("hinge_embedding_loss", inputs, dtype, reduction=reduction)
    _check("hinge_embedding_loss", inputs, dtype, reduction=reduction, margin=0.3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,margin,weighted", [(1, 1.0, False), (2, 0.5, True), (1, 2.0, True)])
def test_multi_margin(p, margin, weighted, reduction, dtype):
    weight = np.random.default_rng(5).random(5).astype(dtype) if weighted else None
    kwargs = dict(p=p, margin=margin, reduction=reduction, **({"weight": weight} if weighted else {}))
    _check("multi_margin_loss", lambda rng, dtype: (rng.standard_normal((4, 5)).astype(dtype),
                                                    rng.integers(0, 5, 4)), dtype, **kwargs)
    _check("multi_margin_loss", lambda rng, dtype: (rng.standard_normal(5).astype(dtype), np.array(2)), dtype,
           **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin(reduction, dtype):
    target = np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [-1, 2, 3, 4, 0], [0, 1, 2, 3, 4]])
    _check("multilabel_margin_loss", lambda rng, dtype: (rng.standard_normal((4, 5)).astype(dtype), target), dtype,
           reduction=reduction)
    _check("multilabel_margin_loss", lambda rng, dtype: (rng.standard_normal(5).astype(dtype), target[0]), dtype,
           reduction=reduction)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin(weighted, reduction, dtype):
    weight = np.random.default_rng(6).random(5).astype(dtype) if weighted else None
    _check("multilabel_soft_margin_loss", lambda rng, dtype: (rng.standard_normal((4, 5)).astype(dtype),
                                                              (rng.random((4, 5)) < 0.5).astype(dtype)),
           dtype, reduction=reduction, **({"weight": weight} if weighted else {}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance(swap, reduction, dtype):
    def inputs(rng, dtype):
        return tuple(rng.standard_normal((6, 4)).astype(dtype) for _ in range(3))
    _check("triplet_margin_with_distance_loss", inputs, dtype, grad_inputs=3, swap=swap, reduction=reduction)
    results = []
    for lib in (ember, torch):
        def cosine_distance(x, y, lib=lib):
            return 1 - lib.nn.functional.cosine_similarity(x, y)
        arrays = inputs(np.random.default_rng(1), dtype)
        results.append(lib.nn.functional.triplet_margin_with_distance_loss(
            *[lib.tensor(a) for a in arrays], distance_function=cosine_distance, margin=0.5, swap=swap,
            reduction=reduction))
    assert_close(*results, **({"atol": 1e-5, "rtol": 1e-4} if dtype == np.float32 else {}))


@pytest.mark.parametrize("name,kwargs", [("SoftMarginLoss", {}), ("HingeEmbeddingLoss", {"margin": 0.5}),
                                         ("MultiMarginLoss", {"p": 2, "margin": 0.7}), ("MultiLabelMarginLoss", {}),
                                         ("MultiLabelSoftMarginLoss", {"reduction": "sum"}),
                                         ("TripletMarginWithDistanceLoss", {"margin": 0.5, "swap": True})])
def test_modules(name, kwargs):
    e_module, t_module = getattr(ember.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(e_module) == repr(t_module)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5))
    targets = {"SoftMarginLoss": _pm_one(rng, (4, 5)), "HingeEmbeddingLoss": _pm_one(rng, (4, 5)),
               "MultiMarginLoss": rng.integers(0, 5, 4), "MultiLabelMarginLoss": rng.integers(-1, 5, (4, 5)),
               "MultiLabelSoftMarginLoss": (rng.random((4, 5)) < 0.5).astype(float)}
    args = [x, targets[name]] if name in targets else [x, x[::-1].copy(), x * 2]
    assert_close(e_module(*[ember.tensor(a) for a in args]), t_module(*[torch.tensor(a) for a in args]))


@pytest.mark.parametrize("exception,call", [
    (ValueError, lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), p=3)),
    (RuntimeError, lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1, 2]))),
    (RuntimeError, lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), weight=lib.ones(2))),
    (RuntimeError, lambda F, lib: F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([[0, 1, -1]]))),
    (ValueError, lambda F, lib: F.triplet_margin_with_distance_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3),
                                                                    margin=0)),
    (RuntimeError, lambda F, lib: F.triplet_margin_with_distance_loss(lib.ones(2, 3), lib.ones(3), lib.ones(2, 3))),
    (ValueError, lambda F, lib: F.soft_margin_loss(lib.ones(2), lib.ones(2), reduction="avg")),
])
def test_errors_like_torch(exception, call):
    with pytest.raises(exception) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(exception) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)
