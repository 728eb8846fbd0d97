"""Tensor hooks, retain_grad, node hooks and post-accumulate hooks against torch
(ember/tensor.py registers them; ember/autograd/engine.py runs them)."""

import numpy as np
import pytest
import torch
from autograd_parity import assert_same

import ember

X = np.array([1.0, -2.0, 0.5])


def test_hooks_on_leaf_and_non_leaf_modify_and_remove():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        h = a * 2
        seen = []
        handle = h.register_hook(lambda g: g * 10)
        a.register_hook(lambda g: seen.append(g.tolist()))
        (h * h).sum().backward(retain_graph=True)
        first = a.grad.tolist()
        handle.remove()
        a.grad = None
        (h * h).sum().backward()
        return first, a.grad.tolist(), seen
    assert_same(program)


def test_leaf_hook_changes_what_is_accumulated():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        a.register_hook(lambda g: g * 2)
        (a * 3).sum().backward()
        return a.grad.tolist()
    assert_same(program)


def test_hook_on_tensor_without_grad_raises():
    errors = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.tensor(X).register_hook(lambda g: g)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_retain_grad_and_retains_grad():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        h = a * 2
        flags = [h.retains_grad, a.retains_grad]
        h.retain_grad()
        a.retain_grad()
        flags += [h.retains_grad, a.retains_grad]
        (h * h).sum().backward(retain_graph=True)
        first = h.grad
        (h * h).sum().backward()
        return flags, first.tolist(), h.grad.tolist(), first is h.grad, h.is_leaf
    assert_same(program)


def test_retained_grad_sees_hooks_registered_before_and_after():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        h = a * 2
        order = []
        h.register_hook(lambda g: order.append("before"))
        h.retain_grad()
        h.register_hook(lambda g: order.append("after") or g * 2)
        (h * h).sum().backward()
        return order, h.grad.tolist(), a.grad.tolist()
    assert_same(program)


def test_node_prehook_and_hook():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = a.exp()
        shapes = []
        y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs:
                                shapes.append((len(grad_inputs), len(grad_outputs))) or (grad_inputs[0] + 1,))
        y.sum().backward()
        return np.round(a.grad.numpy(), 12).tolist(), shapes
    assert_same(program)


def test_node_hook_removed_by_handle():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = a * 3
        handle = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0,))
        handle.remove()
        y.sum().backward()
        return a.grad.tolist()
    assert_same(program)


def test_hooks_run_with_autograd_grad_but_grad_is_untouched():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        h = a * 2
        h.retain_grad()
        seen = []
        a.register_hook(lambda g: seen.append(g.tolist()))
        lib.autograd.grad((h * 3).sum(), a)
        return seen, a.grad, h.grad.tolist()
    assert_same(program)


def test_post_accumulate_grad_hook():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        seen = []
        a.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (a * 3).sum().backward()
        (a * 3).sum().backward()
        lib.autograd.grad((a * 3).sum(), a)  # .grad is not updated: no call
        return seen
    assert_same(program)


def test_post_accumulate_grad_hook_on_non_leaf_raises():
    errors = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            (lib.tensor(X, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda t: None)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
