"""binary_cross_entropy and binary_cross_entropy_with_logits (ember_loss/binary.py)
against PyTorch: every reduction, float32/float64, input and target gradients, weight
and pos_weight broadcasting, the -100 log clamp at 0 and 1, large logits, gradcheck,
errors."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 4)]


def probabilities(shape, dtype, seed=1):
    return np.asarray(np.random.default_rng(seed).uniform(0.02, 0.98, size=shape), dtype=dtype)


def bce(weight=None, **kwargs):
    def call(lib, p, y):
        w = None if weight is None else lib.tensor(weight)
        return lib.nn.functional.binary_cross_entropy(p, y, weight=w, **kwargs)
    return call


def bce_logits(weight=None, pos_weight=None, **kwargs):
    def call(lib, x, y):
        w = None if weight is None else lib.tensor(weight)
        pw = None if pos_weight is None else lib.tensor(pos_weight)
        return lib.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw, **kwargs)
    return call


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce(dtype, shape, reduction, weighted):
    weight = probabilities(shape[-1:], dtype, seed=3) + 0.5 if weighted else None
    # the target requires grad: torch's target gradient is compared too
    assert_parity(bce(weight, reduction=reduction), probabilities(shape, dtype), probabilities(shape, dtype, 2))


def test_bce_log_clamp_at_zero_and_one():
    p = np.array([0.0, 1.0, 0.0, 1.0, 1e-30, 1 - 1e-7], dtype="float64")
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.3])
    assert_parity(bce(reduction="none"), p, y)
    assert_parity(bce(reduction="sum"), p.astype("float32"), y.astype("float32"))


@pytest.mark.parametrize("p", [np.array([0.5, 1.5]), np.array([-0.1, 0.5]), np.array([np.nan, 0.5])])
def test_bce_input_out_of_range(p):
    assert_parity(bce(), p.astype("float32"), np.array([1.0, 0.0], dtype="float32"))


def test_bce_errors():
    assert_parity(bce(), probabilities((3, 1), "float32"), probabilities((3,), "float32"))  # size mismatch
    assert_parity(bce(np.ones(2, "float32")), probabilities((3, 4), "float32"), probabilities((3, 4), "float32"))


def test_bce_weight_broadcasts_over_batch():
    weight = np.linspace(0.5, 1.5, 3).reshape(3, 1)
    assert_parity(bce(weight, reduction="none"), probabilities((3, 4), "float64"), probabilities((3, 4), "float64"))


def test_bce_gradcheck():
    p = ember.tensor(probabilities((3, 4), "float64")).requires_grad_()
    y = ember.tensor(probabilities((3, 4), "float64", 2)).requires_grad_()
    w = ember.tensor(np.linspace(0.5, 2, 4))
    assert gradcheck(lambda p, y: ember.nn.functional.binary_cross_entropy(p, y, weight=w), (p, y))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted, pos_weighted", [(False, False), (True, False), (False, True), (True, True)])
def test_bce_with_logits(dtype, shape, reduction, weighted, pos_weighted):
    weight = probabilities(shape[-1:], dtype, seed=3) + 0.5 if weighted else None
    pos_weight = probabilities(shape[-1:], dtype, seed=4) * 3 if pos_weighted else None
    assert_parity(bce_logits(weight, pos_weight, reduction=reduction), make_tensor(shape, dtype),
                  probabilities(shape, dtype, 2))


@pytest.mark.parametrize("argument", ["weight", "pos_weight"])
def test_bce_with_logits_weights_requiring_grad_are_errors(argument):
    fn = lambda lib, x, y, w: lib.nn.functional.binary_cross_entropy_with_logits(x, y, **{argument: w})
    assert_parity(fn, make_tensor((3, 4), "float64"), probabilities((3, 4), "float64"),
                  probabilities((4,), "float64", 5) * 2)
    bce_fn = lambda lib, p, y, w: lib.nn.functional.binary_cross_entropy(p, y, weight=w)
    assert_parity(bce_fn, probabilities((3, 4), "float64"), probabilities((3, 4), "float64"),
                  probabilities((4,), "float64", 5) * 2)


def test_bce_with_logits_large_and_zero_logits():
    x = np.array([-1000.0, -50.0, 0.0, 0.0, 50.0, 1000.0], dtype="float32")
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], dtype="float32")
    assert_parity(bce_logits(reduction="none"), x, y)
    assert_parity(bce_logits(pos_weight=np.full(6, 2.5, "float32"), reduction="none"), x, y)


@pytest.mark.parametrize("weight, pos_weight", [(np.ones((2, 3, 4)), None), (None, np.ones((2, 3, 4))),
                                                (np.ones(5), None), (None, np.ones(5))])
def test_bce_with_logits_broadcast_errors(weight, pos_weight):
    assert_parity(bce_logits(weight, pos_weight), make_tensor((3, 4), "float64"), probabilities((3, 4), "float64"))


def test_bce_with_logits_size_error():
    assert_parity(bce_logits(), make_tensor((3, 4)), probabilities((4,), "float32"))


def test_bce_with_logits_gradcheck():
    x = ember.tensor(make_tensor((3, 4), "float64")).requires_grad_()
    y = ember.tensor(probabilities((3, 4), "float64")).requires_grad_()
    pw = ember.tensor(np.linspace(0.5, 3, 4))
    w = ember.tensor(np.linspace(0.5, 2, 4))
    fn = lambda x, y: ember.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw,
                                                                           reduction="sum")
    assert gradcheck(fn, (x, y))
