"""l1_loss, mse_loss, smooth_l1_loss, huber_loss (ember_loss/regression.py) against
PyTorch: every reduction, float32/float64, input and target gradients, broadcasting
with PyTorch's warning, weight=, beta/delta, gradcheck, mse double backward, errors."""

import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]

LOSSES = {
    "l1_loss": {},
    "mse_loss": {},
    "smooth_l1_loss": {"beta": 0.5},
    "huber_loss": {"delta": 0.7},
}


def call(name, **kwargs):
    return lambda lib, x, t: getattr(lib.nn.functional, name)(x, t, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(LOSSES))
def test_values_and_gradients(name, reduction, shape, dtype):
    # input and target gradients both compared (both are float tensors requiring grad)
    x, t = make_tensor(shape, dtype, seed=1), make_tensor(shape, dtype, seed=2)
    assert_parity(call(name, reduction=reduction, **LOSSES[name]), x, t)


@pytest.mark.parametrize("name", list(LOSSES))
def test_noncontiguous(name):
    assert_parity(call(name), make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2),
                  noncontiguous=True)


@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_smooth_l1_beta(beta, reduction):
    assert_parity(call("smooth_l1_loss", beta=beta, reduction=reduction), make_tensor((4, 5), "float64", seed=1),
                  make_tensor((4, 5), "float64", seed=2))


@pytest.mark.parametrize("delta", [0.1, 1.0, 4.0])
def test_huber_delta(delta):
    assert_parity(call("huber_loss", delta=delta), make_tensor((4, 5), "float64", seed=1),
                  make_tensor((4, 5), "float64", seed=2))


@pytest.mark.parametrize("name", ["l1_loss", "mse_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weight(name, reduction):
    w = np.random.default_rng(4).uniform(0.1, 2, size=(3, 4))
    fn = lambda lib, x, t: getattr(lib.nn.functional, name)(x, t, reduction=reduction, weight=lib.tensor(w))
    assert_parity(fn, make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2))
    bad = lambda lib, x, t: getattr(lib.nn.functional, name)(x, t, weight=lib.ones(4, dtype=lib.float64))
    assert_parity(bad, make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2))


@pytest.mark.parametrize("name", list(LOSSES))
def test_broadcasting_warns_like_torch(name):
    x, t = make_tensor((3, 1), "float64", seed=1), make_tensor((4,), "float64", seed=2)
    with pytest.warns(UserWarning, match="different to the input size"):
        assert_parity(call(name, reduction="none"), x, t)
    # shapes that cannot broadcast: the same error type as torch (after the same warning)
    with pytest.warns(UserWarning, match="different to the input size"):
        assert_parity(call(name), make_tensor((3,), seed=1), make_tensor((4,), seed=2))


def test_same_shapes_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.functional.mse_loss(ember.ones(3), ember.zeros(3))


@pytest.mark.parametrize("name, kwargs", [("smooth_l1_loss", {"beta": -1.0}), ("huber_loss", {"delta": 0.0}),
                                          ("huber_loss", {"delta": -1.0}), ("mse_loss", {"reduction": "avg"}),
                                          ("l1_loss", {"reduction": "max"})])
def test_errors(name, kwargs):
    assert_parity(call(name, **kwargs), make_tensor((3,), seed=1), make_tensor((3,), seed=2))


@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True)])
def test_legacy_flags(size_average, reduce):
    fn = lambda lib, x, t: lib.nn.functional.mse_loss(x, t, size_average=size_average, reduce=reduce)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert_parity(fn, make_tensor((3, 4), seed=1), make_tensor((3, 4), seed=2))


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck(name, reduction):
    x = ember.tensor(make_tensor((3, 4), "float64", seed=1)).requires_grad_()
    t = ember.tensor(make_tensor((3, 4), "float64", seed=2)).requires_grad_()
    fn = lambda x, t: getattr(ember.nn.functional, name)(x, t, reduction=reduction, **LOSSES[name])
    assert gradcheck(fn, (x, t))
    if name == "mse_loss":
        assert gradgradcheck(fn, (x, t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_double_backward_vs_torch(reduction):
    def second(lib, x, t):
        x, t = x.requires_grad_(), t.requires_grad_()  # (grad=False: assert_parity leaves them plain)
        loss = lib.nn.functional.mse_loss(x, t, reduction=reduction)
        gx, gt = lib.autograd.grad(loss.sum(), (x, t), create_graph=True)
        return lib.autograd.grad((gx * gx).sum() + (gt * x).sum(), (x, t))
    assert_parity(second, make_tensor((3, 4), "float64", seed=1), make_tensor((3, 4), "float64", seed=2), grad=False)


@pytest.mark.parametrize("name, kwargs", [("huber_loss", {"delta": 1.0}), ("huber_loss", {"delta": 0.5}),
                                          ("smooth_l1_loss", {"beta": 1.0})])
def test_second_derivative_at_the_kink_vs_torch(name, kwargs):
    # |d| == delta (and beta) exactly: both sides agree in value and slope, and
    # torch's second derivative there is the linear side's, 0.
    def second(lib, x, t):
        x, t = x.requires_grad_(), t.requires_grad_()
        loss = getattr(lib.nn.functional, name)(x, t, reduction="none", **kwargs)
        (gx,) = lib.autograd.grad(loss.sum(), x, create_graph=True)
        return gx, lib.autograd.grad(gx.sum(), (x, t))
    edge = next(iter(kwargs.values()))
    x = np.array([edge, -edge, 0.5 * edge, 2.0 * edge, 0.0])
    assert_parity(second, x, np.zeros(5), grad=False)


def test_mse_is_one_graph_node():
    x = ember.randn(3, requires_grad=True)
    loss = ember.nn.functional.mse_loss(x, ember.zeros(3))
    assert loss.grad_fn.next_functions[0][0] is x._get_grad_accumulator()


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("shapes", [((3,), (2,)), ((2, 3), (4, 3)), ((4, 2), (3, 1, 5))], ids=str)
def test_shapes_that_do_not_broadcast_give_torchs_message(name, shapes):
    import torch

    messages = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the different-size warning both give first)
            with pytest.raises(RuntimeError) as error:
                call(name, **LOSSES[name])(lib, lib.ones(shapes[0]), lib.ones(shapes[1]))
        messages.append(str(error.value))
    assert messages[1] == messages[0]
