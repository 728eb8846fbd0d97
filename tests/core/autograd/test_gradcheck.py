"""gradcheck and gradgradcheck (ember/autograd/gradcheck.py), compared with torch's
verdicts on the same functions, right and deliberately wrong."""

import numpy as np
import pytest
import torch

import ember

X = np.random.default_rng(0).uniform(0.5, 2.0, (3, 2))


def functions(lib):
    class Wrong(lib.autograd.Function):  # d(x*x) is 2x, not x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x

    class WrongSecond(lib.autograd.Function):  # right first derivative, detached second
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2

    return {
        "product": lambda a, b: (a * b).sum(-1),
        "sin_times": lambda a, b: a.sin() * b.exp(),
        "tuple_out": lambda a, b: (a.t() * 2, (a * b).sum()),
        "scalar_arg": lambda a, b: a * 3.0 + b,
        "wrong": lambda a, b: Wrong.apply(a),
        "wrong_second": lambda a, b: WrongSecond.apply(a) * b,
    }


def verdicts(lib, check, transposed=False):
    a = lib.tensor(X, requires_grad=True)
    if transposed:
        a = lib.tensor(X.T.copy(), requires_grad=True).t()
    b = lib.tensor(X[:, :1] / 3, requires_grad=True)
    return {name: check(lib)(fn, (a, b), raise_exception=False) for name, fn in functions(lib).items()}


@pytest.mark.parametrize("transposed", [False, True])
def test_gradcheck_verdicts_match_torch(transposed):
    check = lambda lib: lib.autograd.gradcheck
    result = verdicts(ember, check, transposed)
    assert result == verdicts(torch, check, transposed)
    assert result["product"] and not result["wrong"]


def test_gradgradcheck_verdicts_match_torch():
    check = lambda lib: lib.autograd.gradgradcheck
    result = verdicts(ember, check)
    assert result == verdicts(torch, check)
    assert result["sin_times"] and not result["wrong_second"]


def test_wrong_backward_raises_gradcheck_error():
    from torch.autograd.gradcheck import GradcheckError as TorchError

    from ember.autograd.gradcheck import GradcheckError as EmberError

    for lib, error in ((ember, EmberError), (torch, TorchError)):
        a = lib.tensor(X, requires_grad=True)
        with pytest.raises(error, match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradcheck(functions(lib)["wrong"], (a, a))
    assert issubclass(ember.autograd.GradcheckError, RuntimeError)


def test_no_input_requiring_grad_raises_value_error():
    messages = []
    for lib in (ember, torch):
        with pytest.raises(ValueError) as info:
            lib.autograd.gradcheck(lambda a: a.exp(), (lib.tensor(X),))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_float32_inputs_warn():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="not a double precision"):
            lib.autograd.gradcheck(lambda a: a.exp(), (lib.tensor(X, dtype=lib.float32, requires_grad=True),),
                                   raise_exception=False)


def test_inputs_are_left_unchanged():
    a = ember.tensor(X, requires_grad=True)
    before = a.detach().numpy().copy()
    ember.autograd.gradcheck(lambda t: t.exp(), (a,))
    np.testing.assert_array_equal(a.detach().numpy(), before)
    assert a.grad is None
