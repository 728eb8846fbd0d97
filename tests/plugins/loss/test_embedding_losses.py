"""cosine_embedding_loss, margin_ranking_loss, triplet_margin_loss
(ember_loss/embedding_losses.py) against PyTorch: every reduction, float32/float64,
margins, p and swap, gradients of every input (target too where torch gives one),
gradcheck, errors."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]


def signs(shape, seed=3):
    return np.where(np.random.default_rng(seed).uniform(size=shape) > 0.5, 1, -1).astype("int64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.2])
@pytest.mark.parametrize("shapes", [((4, 5), (4,)), ((5,), ())])
def test_cosine_embedding(dtype, reduction, margin, shapes):
    shape, target_shape = shapes
    fn = lambda lib, a, b, y: lib.nn.functional.cosine_embedding_loss(a, b, y, margin=margin, reduction=reduction)
    assert_parity(fn, make_tensor(shape, dtype, seed=1), make_tensor(shape, dtype, seed=2), signs(target_shape))


def test_cosine_embedding_other_labels_and_float_target():
    fn = lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(a, b, lib.tensor([1.0, -1.0, 0.0, 2.0]))
    assert_parity(fn, make_tensor((4, 3), seed=1), make_tensor((4, 3), seed=2))


@pytest.mark.parametrize("shapes", [((4, 5), (4, 1)), ((4, 5), ()), ((5,), (4,)), ((2, 4, 5), (2,))])
def test_cosine_embedding_errors(shapes):
    shape, target_shape = shapes
    fn = lambda lib, a, b, y: lib.nn.functional.cosine_embedding_loss(a, b, y)
    assert_parity(fn, make_tensor(shape, seed=1), make_tensor(shape, seed=2), signs(target_shape))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
@pytest.mark.parametrize("shape", [(6,), (2, 3), ()])
def test_margin_ranking(dtype, reduction, margin, shape):
    # a float target requires grad: torch's target gradient is compared too
    y = signs(shape).astype(dtype)
    fn = lambda lib, a, b, y: lib.nn.functional.margin_ranking_loss(a, b, y, margin=margin, reduction=reduction)
    assert_parity(fn, make_tensor(shape, dtype, seed=1), make_tensor(shape, dtype, seed=2), y)


def test_margin_ranking_dimension_error():
    fn = lambda lib, a, b, y: lib.nn.functional.margin_ranking_loss(a, b, y)
    assert_parity(fn, make_tensor((3,), seed=1), make_tensor((3,), seed=2), signs((1, 3)).astype("float32"))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2, 3.5])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("margin", [0.5, 2.0])
def test_triplet_margin(dtype, reduction, p, swap, margin):
    fn = lambda lib, a, pos, neg: lib.nn.functional.triplet_margin_loss(a, pos, neg, margin=margin, p=p, swap=swap,
                                                                        reduction=reduction)
    assert_parity(fn, make_tensor((5, 4), dtype, seed=1), make_tensor((5, 4), dtype, seed=2),
                  make_tensor((5, 4), dtype, seed=3))


def test_triplet_margin_eps_and_1d():
    fn = lambda lib, a, pos, neg: lib.nn.functional.triplet_margin_loss(a, pos, neg, eps=0.1, reduction="none")
    assert_parity(fn, make_tensor((4,), "float64", seed=1), make_tensor((4,), "float64", seed=2),
                  make_tensor((4,), "float64", seed=3))


@pytest.mark.parametrize("margin, shapes", [(0.0, ((3, 4), (3, 4), (3, 4))), (-1.0, ((3, 4), (3, 4), (3, 4))),
                                            (1.0, ((3, 4), (3, 4), (4,)))])
def test_triplet_margin_errors(margin, shapes):
    fn = lambda lib, a, pos, neg: lib.nn.functional.triplet_margin_loss(a, pos, neg, margin=margin)
    assert_parity(fn, *[make_tensor(s, seed=i) for i, s in enumerate(shapes)])


def test_gradcheck():
    a, b, c = (ember.tensor(make_tensor((4, 3), "float64", seed=i)).requires_grad_() for i in range(3))
    y = ember.tensor(signs((4,)))
    F = ember.nn.functional
    assert gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, y, margin=0.1), (a, b))
    assert gradcheck(lambda a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], y.double(), margin=0.1), (a, b))
    assert gradcheck(lambda a, b, c: F.triplet_margin_loss(a, b, c, p=3, swap=True, reduction="sum"), (a, b, c))
