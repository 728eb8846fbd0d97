"""The backward engine (ember/autograd/engine.py) against PyTorch: graph structure,
dependency order, retain_graph, create_graph, autograd.grad and backward(inputs=)."""

import numpy as np
import pytest
import torch
from autograd_parity import assert_same_error, both, raised

import ember

X = np.array([0.5, -1.25, 2.0])


def node_names(fn):
    return [(None if node is None else node.name().split("::")[-1], nr) for node, nr in fn.next_functions]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_next_functions_structure(dtype):
    def program(lib):
        a = lib.tensor(X.astype(dtype), requires_grad=True)
        b = lib.tensor(X.astype(dtype))
        y = (a * b + 2).sum()
        add = y.grad_fn.next_functions[0][0]
        mul = add.next_functions[0][0]
        return (y.grad_fn.name(), node_names(y.grad_fn), node_names(add), node_names(mul),
                type(mul.next_functions[0][0]).__name__.split("::")[-1])
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_is_leaf_and_requires_grad_propagation():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        c = lib.tensor(X)
        with_grad = a * c
        without = c * 2
        return (a.is_leaf, c.is_leaf, with_grad.is_leaf, without.is_leaf, with_grad.requires_grad,
                without.requires_grad, without.grad_fn is None, (a > 0).requires_grad)
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_diamond_runs_in_dependency_order():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        a = x * 2
        b, c = a.exp(), a.sin()
        order = []
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_hook(lambda g, name=name: order.append(name))
        (b * c).sum().backward()
        return order, x.grad.tolist()
    (e_order, e_grad), (t_order, t_grad) = both(program)
    assert e_order == t_order and e_order[-1] == "a"
    np.testing.assert_allclose(e_grad, t_grad, rtol=1e-12)


def test_deep_chain_does_not_recurse():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True, dtype=lib.float64)
        y = a
        for _ in range(10_000):
            y = y * 1.0001
        y.sum().backward()
        return a.grad.item()
    e, t = both(program)
    assert e == pytest.approx(t, rel=1e-12)


def test_two_backward_calls_accumulate():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        (a * a).sum().backward()
        first = a.grad
        (a * 3).sum().backward()
        return first.tolist(), a.grad.tolist(), first is a.grad
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_second_backward_without_retain_graph_raises():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = (a * a).sum()
        y.backward()
        y.backward()
    assert_same_error(program)


def test_retain_graph_allows_a_second_backward():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = (a.exp() * a).sum()
        y.backward(retain_graph=True)
        y.backward()
        return a.grad.tolist()
    e, t = both(program)
    np.testing.assert_allclose(e, t, rtol=1e-12)


def test_non_scalar_without_gradient_raises():
    assert_same_error(lambda lib: (lib.tensor(X, requires_grad=True) * 2).backward())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_implicit_gradient_of_a_one_element_output(dtype, shape):
    # backward() with no gradient seeds a one of the output's dtype (a 0-d output takes
    # the direct path of engine._implicit_grad): on a leaf it becomes .grad itself, a
    # new tensor each call, so a second call adds into the first's.
    def program(lib):
        leaf = lib.ones(shape, dtype=getattr(lib, dtype), requires_grad=True)
        y = (leaf * 3).sum() if shape else leaf * 3
        y.backward()
        leaf.backward(lib.full(shape, 2.0, dtype=leaf.dtype))
        root = lib.full(shape, 5.0, dtype=getattr(lib, dtype), requires_grad=True)
        root.backward()
        first = root.grad
        root.backward()
        return (str(leaf.grad.dtype), leaf.grad.float().tolist(), str(root.grad.dtype), first is root.grad,
                root.grad.float().tolist(), tuple(root.grad.stride()))
    ember_result, torch_result = both(program)
    assert ember_result[0].split(".")[-1] == torch_result[0].split(".")[-1]
    assert ember_result[2].split(".")[-1] == torch_result[2].split(".")[-1]
    assert ember_result[1] == torch_result[1]
    assert ember_result[3:] == torch_result[3:]


def test_backward_of_tensor_without_grad_raises():
    assert_same_error(lambda lib: lib.tensor(X).sum().backward())


def test_gradient_shape_mismatch_raises_runtime_error():
    def program(lib):
        (lib.tensor(X, requires_grad=True) * 2).backward(lib.ones(2, dtype=lib.float64))
    assert raised(program, ember)[0] is raised(program, torch)[0]


@pytest.mark.parametrize("function", [
    lambda lib, x: (x.sin() * x.exp()).sum(),
    lambda lib, x: (x ** 3 / (1 + x * x)).sum(),
    lambda lib, x: (x.tanh() * x).prod(),
])
def test_second_and_third_derivatives(function):
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        g1, = lib.autograd.grad(function(lib, x), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return [g.detach().numpy() for g in (g1, g2, g3)]
    for e, t in zip(*both(program)):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_grad_allow_unused_and_materialize_grads():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        unused = lib.tensor([1.0], requires_grad=True)
        y = (x * 2).sum()
        loose = lib.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
        zeros = lib.autograd.grad(y, [x, unused], materialize_grads=True, retain_graph=True)
        return loose[1], zeros[1].tolist(), x.grad, unused.grad
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_grad_unused_input_raises():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        unused = lib.tensor([1.0], requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x, unused])
    assert_same_error(program)


def test_grad_of_non_leaf_with_grad_outputs_leaves_dot_grad_alone():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        h = x * 3
        y = h * h
        g, = lib.autograd.grad(y, h, grad_outputs=lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return g.tolist(), x.grad, g.requires_grad
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_backward_inputs_restricts_accumulation():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor([2.0, 1.0, -1.0], dtype=lib.float64, requires_grad=True)
        h = x * w
        (h * h).sum().backward(inputs=[w, h])
        return x.grad, w.grad.tolist(), h.grad.tolist()
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_multiple_roots():
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        lib.autograd.backward([(x * 2).sum(), x * x], [None, lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64)])
        return x.grad.tolist()
    ember_result, torch_result = both(program)
    assert ember_result == torch_result


def test_custom_backward_returning_none_for_a_used_input():
    def program(lib):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(X, requires_grad=True)
        (Half.apply(x, y * 2) * 3).sum().backward()
        return x.grad.tolist(), y.grad
    ember_result, torch_result = both(program)
    assert ember_result == torch_result
