"""Higher-order gradients (create_graph) against torch, and gradgradcheck on the
same functions."""

import numpy as np
import pytest
import torch

import ember

X = np.array([0.3, -1.1, 0.8, 1.7])
Y = np.array([1.2, 0.4, -0.6, 2.0])

FUNCTIONS = {
    "sin_exp": lambda a, b: a.sin() * b.exp(),
    "rational": lambda a, b: a ** 3 / (1 + b * b),
    "tanh_log": lambda a, b: a.tanh() * (b * b + 1).log(),
    "matmul": lambda a, b: (a.reshape(2, 2) @ b.reshape(2, 2)).sigmoid().reshape(4),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_mixed_second_and_third_derivatives(name):
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(Y, requires_grad=True)
        out = FUNCTIONS[name](a, b).sum()
        ga, gb = lib.autograd.grad(out, (a, b), create_graph=True)
        gaa, gab = lib.autograd.grad((ga * b).sum(), (a, b), create_graph=True)
        gaaa, = lib.autograd.grad(gaa.sum(), a, allow_unused=True, materialize_grads=True)
        return [t.detach().numpy() for t in (ga, gb, gaa, gab, gaaa)]
    for e, t in zip(program(ember), program(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradgradcheck(name):
    a = ember.tensor(X, requires_grad=True)
    b = ember.tensor(Y, requires_grad=True)
    assert ember.autograd.gradgradcheck(FUNCTIONS[name], (a, b))


def test_backward_with_create_graph_then_grad_of_grad():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        (a ** 4).sum().backward(create_graph=True)
        first = a.grad
        g2, = lib.autograd.grad(first.sum(), a)
        return first.detach().numpy(), g2.numpy()
    for e, t in zip(program(ember), program(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_grad_without_create_graph_is_not_differentiable():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        g, = lib.autograd.grad((a ** 3).sum(), a)
        return g.requires_grad, g.grad_fn
    assert program(ember) == program(torch)
