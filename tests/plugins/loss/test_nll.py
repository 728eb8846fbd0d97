"""nll_loss (ember_loss/nll.py) against PyTorch: (C,), (N, C) and K-dimensional inputs,
weight and ignore_index combinations, every reduction, float32/float64, gradients,
gradcheck and double backward, edge cases and PyTorch's errors."""

import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
REDUCTIONS = ["none", "mean", "sum"]
SHAPES = [((5,), ()), ((4, 5), (4,)), ((3, 4, 2), (3, 2)), ((2, 3, 2, 3), (2, 2, 3)),
          ((2, 3, 2, 1, 2), (2, 2, 1, 2))]


def indices(shape, target_shape, ignore=None, seed=0):
    classes = shape[0] if len(shape) == 1 else shape[1]
    target = np.asarray(np.random.default_rng(seed).integers(0, classes, size=target_shape), dtype="int64")
    if ignore is not None and target.size:
        target.ravel()[::2] = ignore
    return target


def nll(weight=None, **kwargs):
    def call(lib, x, t):
        w = None if weight is None else lib.tensor(weight)
        return lib.nn.functional.nll_loss(x, t, weight=w, **kwargs)
    return call


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, target_shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted, ignore", list(itertools.product([False, True], [None, 2])))
def test_nll_loss(dtype, shape, target_shape, reduction, weighted, ignore):
    classes = shape[0] if len(shape) == 1 else shape[1]
    weight = np.random.default_rng(3).uniform(0.1, 2, classes).astype(dtype) if weighted else None
    kwargs = dict(reduction=reduction) if ignore is None else dict(reduction=reduction, ignore_index=ignore)
    x = np.log(np.random.default_rng(1).uniform(0.01, 1, size=shape)).astype(dtype)
    assert_parity(nll(weight, **kwargs), x, indices(shape, target_shape, ignore))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_1d_input_with_one_element_target(reduction):
    # forward only: torch's own backward fails here ("size mismatch (got input: [5], target: [1])")
    assert_parity(nll(reduction=reduction), make_tensor((5,)), np.array([3]), grad=False)


def test_noncontiguous_and_uint8():
    assert_parity(nll(reduction="none"), make_tensor((4, 6), "float64"), indices((4, 6), (4,)), noncontiguous=True)
    assert_parity(nll(), make_tensor((4, 6)), indices((4, 6), (4,)).astype("uint8"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_all_ignored_and_empty(reduction):
    assert_parity(nll(ignore_index=1, reduction=reduction), make_tensor((3, 4), "float64"), np.ones(3, "int64"))
    assert_parity(nll(reduction=reduction), make_tensor((0, 4), "float64"), np.zeros(0, "int64"))
    assert_parity(nll(reduction=reduction), make_tensor((0, 4, 2), "float64"), np.zeros((0, 2), "int64"))


@pytest.mark.parametrize("shape, target", [((), np.array(0)), ((3, 4), np.zeros(2, "int64")),
                                           ((3, 4), np.zeros((3, 1), "int64")), ((4,), np.zeros(2, "int64")),
                                           ((3, 4, 5), np.zeros((3, 4), "int64")),
                                           ((2, 3, 4, 5), np.zeros((2, 4), "int64")),
                                           ((2, 3, 4, 5), np.zeros((2, 4, 4), "int64")),
                                           ((3, 4), np.array([0, 4, 1])), ((3, 4), np.array([0, -2, 1])),
                                           ((3, 4), np.zeros(3, "int32")), ((3, 4), np.zeros(3, "float32"))])
def test_errors(shape, target):
    assert_parity(nll(), make_tensor(shape), target)


@pytest.mark.parametrize("weight", [np.ones(3, "float32"), np.ones((2, 2), "float32"), np.ones(4, "float64")])
def test_weight_errors(weight):
    assert_parity(nll(weight), make_tensor((3, 4)), indices((3, 4), (3,)))
    assert_parity(nll(weight), make_tensor((2, 4, 2, 2)), indices((2, 4, 2, 2), (2, 2, 2)))


def test_integer_input_error():
    assert_parity(nll(), make_tensor((3, 4), "int64"), indices((3, 4), (3,)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck(reduction):
    x = ember.tensor(make_tensor((3, 4, 2), "float64")).requires_grad_()
    t = ember.tensor(indices((3, 4, 2), (3, 2), ignore=1))
    w = ember.tensor(np.linspace(0.5, 2, 4))
    fn = lambda x: ember.nn.functional.nll_loss(x, t, weight=w, ignore_index=1, reduction=reduction)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 5), (5,), (2, 4, 3, 3)])
def test_fused_backward_matches_the_differentiable_one(reduction, shape):
    # Without create_graph the gradient is one op (loss::nll_loss_backward); with it, the
    # coefficients times the gradient in ember ops. Both agree with torch (test_nll_loss).
    x = make_tensor(shape, "float64", seed=3)
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    classes = shape[0] if len(shape) == 1 else shape[1]
    t = np.random.default_rng(4).integers(0, classes, size=target_shape)
    weight = ember.tensor(make_tensor((classes,), "float64", low=0.5, high=2.0, seed=5))
    grads = []
    for create_graph in (False, True):
        leaf = ember.tensor(x, requires_grad=True)
        loss = ember.nn.functional.nll_loss(leaf, ember.tensor(t), weight, reduction=reduction)
        seed = ember.ones_like(loss) * 0.5
        (grad,) = ember.autograd.grad(loss, leaf, seed, create_graph=create_graph)
        grads.append(grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13, atol=1e-15)


def test_log_softmax_then_nll_second_derivative_matches_torch():
    x = make_tensor((4, 6), "float64", seed=6)
    t = np.random.default_rng(7).integers(0, 6, size=4)

    def fn(lib, x):
        loss = lib.nn.functional.nll_loss(x.log_softmax(1), lib.tensor(t))
        (grad,) = lib.autograd.grad(loss, x, create_graph=True)
        return grad

    assert_parity(fn, x, rtol=1e-10, atol=1e-12, grad_rtol=1e-10, grad_atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_plain_rows_match_the_general_kernel(reduction, noncontiguous):
    # (N, C) input, every index in range, no weight and nothing to ignore: a gather
    # forward and a scatter backward. An ignore_index among the classes that no target
    # uses sends the same call through the general kernels.
    x = make_tensor((32, 100), "float64", seed=8)
    if noncontiguous:
        x = np.asfortranarray(x)
    t = np.random.default_rng(9).integers(0, 100, size=32)
    unused = int(np.setdiff1d(np.arange(100), t)[0])
    results = []
    for ignore_index in (-100, unused):
        leaf = ember.tensor(x, requires_grad=True)
        loss = ember.nn.functional.nll_loss(leaf, ember.tensor(t), ignore_index=ignore_index, reduction=reduction)
        loss.backward(ember.ones_like(loss) * 0.5)
        results.append((loss.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-14)
    np.testing.assert_array_equal(results[0][1], results[1][1])
