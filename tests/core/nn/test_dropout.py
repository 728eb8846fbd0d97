"""Dropout (F.dropout/dropout1d/dropout2d and the modules). ember's random stream is
not torch's, so the tests check the structure instead of the values: the fraction
dropped, the 1/(1-p) scale on survivors, whole channels for the channel forms, the
gradient through the same mask, p = 0 and p = 1 and eval mode against torch exactly,
in-place behaviour, reproducibility from ember.manual_seed, and torch's errors."""

import warnings

import numpy as np
import pytest
import torch
from module_parity import same_error, same_structure

import ember
from ember.testing import assert_parity, make_tensor

F = ember.nn.functional


def _fraction_bound(p, n):
    """Five standard deviations of the dropped fraction over n Bernoulli draws."""
    return 5 * np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_statistics_and_scale(dtype, p):
    ember.manual_seed(0)
    x = ember.rand(200, 500, dtype=dtype) + 0.5  # no zeros in the input
    y = F.dropout(x, p)
    assert y.dtype is dtype and y.shape == x.shape
    xv, yv = x.numpy(), y.numpy()
    dropped = yv == 0
    assert abs(dropped.mean() - p) < _fraction_bound(p, xv.size)
    np.testing.assert_allclose(yv[~dropped], xv[~dropped] / (1 - p), rtol=1e-6)


def test_dropout_gradient_uses_the_same_mask():
    ember.manual_seed(1)
    x = (ember.rand(50, 40) + 0.5).requires_grad_()
    y = F.dropout(x, 0.3)
    assert y.grad_fn.name() == "NativeDropoutBackward0"  # torch's node name too
    g = ember.rand(50, 40)
    y.backward(g)
    kept = y.detach().numpy() != 0
    expected = np.where(kept, g.numpy() / 0.7, 0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_dropout_double_backward():
    ember.manual_seed(2)
    x = ember.rand(6, 5, dtype=ember.float64).requires_grad_()
    y = F.dropout(x, 0.5)
    g = ember.ones(6, 5, dtype=ember.float64).requires_grad_()
    (gx,) = ember.autograd.grad(y, x, g, create_graph=True)
    (gg,) = ember.autograd.grad(gx.sum(), g)
    np.testing.assert_array_equal(gg.numpy(), gx.detach().numpy())  # linear in g: same mask and scale


def test_dropout_is_reproducible_from_the_seed():
    x = ember.ones(100)
    ember.manual_seed(7)
    a = F.dropout(x, 0.5)
    ember.manual_seed(7)
    b = F.dropout(x, 0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), F.dropout(x, 0.5).numpy())


@pytest.mark.parametrize("fn", ["dropout", "dropout1d", "dropout2d"])
def test_p_zero_and_eval_return_the_input(fn):
    shape = {"dropout": (4, 5), "dropout1d": (2, 3, 4), "dropout2d": (2, 3, 4, 4)}[fn]
    x = ember.ones(*shape, requires_grad=True)
    assert getattr(F, fn)(x, 0.0) is x
    assert getattr(F, fn)(x, 0.5, training=False) is x
    t = torch.ones(*shape, requires_grad=True)
    assert getattr(torch.nn.functional, fn)(t, 0.0) is t  # torch does the same


@pytest.mark.parametrize("fn, shape", [("dropout", (4, 5)), ("dropout1d", (2, 3, 4)), ("dropout1d", (3, 4)),
                                       ("dropout2d", (2, 3, 4, 4))])
def test_p_one_matches_torch(fn, shape):
    x = make_tensor(shape)
    x.flat[0] = np.nan  # multiplied by zero, NaN stays NaN (torch's rule)
    assert_parity(lambda lib, x: getattr(lib.nn.functional, fn)(x, 1.0), x)


@pytest.mark.parametrize("fn, shape", [("dropout", (4, 5)), ("dropout2d", (2, 3, 4, 4))])
def test_p_zero_and_eval_parity(fn, shape):
    x = make_tensor(shape)
    assert_parity(lambda lib, x: getattr(lib.nn.functional, fn)(x * 1, 0.0), x)
    assert_parity(lambda lib, x: getattr(lib.nn.functional, fn)(x * 1, 0.7, training=False), x)


def test_dropout_inplace():
    ember.manual_seed(3)
    x = ember.rand(30, 30) + 0.5
    before = x.numpy().copy()
    version = x._version
    y = F.dropout(x, 0.4, inplace=True)
    assert y is x and x._version > version
    dropped = x.numpy() == 0
    assert 0.2 < dropped.mean() < 0.6
    np.testing.assert_allclose(x.numpy()[~dropped], before[~dropped] / 0.6, rtol=1e-6)


def test_dropout_inplace_on_leaf_requiring_grad_fails_like_torch():
    same_error(lambda lib: lib.nn.functional.dropout(lib.ones(3, requires_grad=True), 0.5, inplace=True))


def test_dropout_inplace_in_graph():
    x = (ember.rand(20, 20) + 0.5).requires_grad_()
    h = x * 2
    y = F.dropout(h, 0.5, inplace=True)
    assert y is h
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 4.0, 0.0))


@pytest.mark.parametrize("fn, shape", [("dropout", (20, 20)), ("dropout2d", (4, 5, 3, 3))])
def test_inplace_change_after_dropout_keeps_the_gradient(fn, shape):
    """The backward reads only the mask: changing the input or the output in place
    afterwards is fine (as in torch, whose native_dropout saves only the mask)."""
    x = (ember.rand(*shape) + 0.5).requires_grad_()
    h = x * 1
    y = getattr(F, fn)(h, 0.5)
    kept = y.detach().numpy() != 0
    y.add_(1)
    h.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 2.0, 0.0))


def _channels_all_or_nothing(x, y, p):
    """Every (sample, channel) slice is either all zero or all scaled by 1/(1-p)."""
    n, c = x.shape[:2]
    xv = x.numpy().reshape(n, c, -1)
    yv = y.numpy().reshape(n, c, -1)
    dropped = np.all(yv == 0, axis=-1)
    np.testing.assert_allclose(yv[~dropped], xv[~dropped] / (1 - p), rtol=1e-6)
    return dropped


@pytest.mark.parametrize("fn, shape", [("dropout2d", (40, 50, 3, 3)), ("dropout1d", (40, 50, 6))])
def test_channel_dropout(fn, shape):
    ember.manual_seed(4)
    x = ember.rand(*shape) + 0.5
    y = getattr(F, fn)(x, 0.3)
    dropped = _channels_all_or_nothing(x, y, 0.3)
    assert abs(dropped.mean() - 0.3) < _fraction_bound(0.3, dropped.size)


def test_dropout1d_unbatched():
    ember.manual_seed(5)
    x = (ember.rand(30, 8) + 0.5).requires_grad_()
    y = F.dropout1d(x, 0.5)
    assert y.shape == x.shape
    _channels_all_or_nothing(x.detach().unsqueeze(0), y.detach().unsqueeze(0), 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() != 0) * 2.0)


def test_dropout2d_3d_input_is_channelwise_1d_with_warning():
    ember.manual_seed(6)
    x = ember.rand(20, 30, 5) + 0.5
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        y = F.dropout2d(x, 0.5)
    _channels_all_or_nothing(x, y, 0.5)


def test_dropout2d_other_ranks_warn():
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(ember.ones(3, 4), 0.5)


def test_errors_like_torch():
    for p in (-0.1, 1.5):
        same_error(lambda lib, p=p: lib.nn.functional.dropout(lib.ones(3), p))
        same_error(lambda lib, p=p: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4), p))
        same_error(lambda lib, p=p: lib.nn.Dropout(p))
    same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5), 0.5))
    same_error(lambda lib: lib.nn.functional.dropout1d(lib.ones(3), 0.5))
    same_error(lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.int64), 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda lib: lib.nn.functional.dropout2d(lib.ones(3), 0.5))


@pytest.mark.parametrize("name, shape", [("Dropout", (8, 9)), ("Dropout1d", (4, 5, 6)), ("Dropout2d", (4, 5, 3, 3))])
def test_modules(name, shape):
    for args in ((), (0.2,), (0.3, True)):
        same_structure(getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args))
    m = getattr(ember.nn, name)(0.5)
    x = ember.rand(*shape) + 0.5
    assert m.training
    ember.manual_seed(0)
    y = m(x)
    assert bool((y == 0).any()) and bool((y != 0).any())
    m.eval()
    assert m(x) is x
    m.train()
    with ember.no_grad():
        assert m(x).shape == x.shape


def test_module_inplace():
    m = ember.nn.Dropout(0.5, inplace=True)
    x = ember.rand(10, 10) + 0.5
    assert m(x) is x
    assert bool((x == 0).any())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_native_dropout_backward_takes_torchs_schema(dtype):
    # torch.ops.aten.native_dropout_backward(grad_output, mask, scale): the mask a tensor argument
    grad = np.arange(-3, 3).reshape(2, 3).astype(dtype)
    mask = np.array([[True, False, True], [False, True, True]])
    assert_parity(lambda lib, g, m: lib.ops.aten.native_dropout_backward(g, m, 2.5) if lib.__name__ == "torch"
                  else lib.ops.aten.native_dropout_backward(g, m, scale=2.5), grad, mask,
                  grad=dtype.startswith("float"))
