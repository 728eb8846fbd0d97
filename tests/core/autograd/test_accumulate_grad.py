"""How gradients land in ``.grad`` (ember/autograd/accumulate.py): against torch, and
NOTE [ Stealing the incoming gradient ] checked from both sides: stealing happens when
nothing else holds the gradient, and never when memory is shared."""

import numpy as np
import pytest
from autograd_parity import assert_same

import ember
from ember.autograd import accumulate

X = np.array([1.0, -2.0, 0.5])


def shares(a, b):
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def test_a_plus_b_gives_separate_grads():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X, requires_grad=True)
        (a + b).sum().backward()
        separate = (a.grad is b.grad, shares(a.grad, b.grad))
        a.grad.add_(1)
        return separate, b.grad.tolist()
    assert_same(program)


@pytest.mark.parametrize("root", ["leaf", "non_leaf", "clone"])
def test_user_gradient_is_not_aliased(root):
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        g = lib.tensor([5.0, 6.0, 7.0], dtype=lib.float64)
        out = {"leaf": a, "non_leaf": a * 1, "clone": a.clone()}[root]
        out.backward(g)
        aliased = (a.grad is g, shares(a.grad, g))
        g.add_(1)
        return aliased, a.grad.tolist()
    assert_same(program)


def test_second_accumulation_is_in_place():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        (a * a).sum().backward()
        before = a.grad
        (a * 3).sum().backward()
        return before is a.grad, before.tolist()
    assert_same(program)


def test_create_graph_makes_grad_differentiable():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        (a * a * a).sum().backward(create_graph=True)
        first = (a.grad.requires_grad, a.grad.grad_fn is not None)
        (a * a).sum().backward(create_graph=True)
        g2, = lib.autograd.grad(a.grad.sum(), a)
        return first, a.grad.grad_fn.name(), g2.tolist()
    assert_same(program)


def test_grad_does_not_share_memory_with_saved_outputs_or_retained_grads():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        h = a.exp()
        h.retain_grad()
        h.sum().backward()
        return shares(a.grad, h), shares(a.grad, h.grad)
    assert_same(program)


def test_expanded_gradient_becomes_contiguous_grad():
    def program(lib):
        a = lib.tensor([[1.0, 2.0]], requires_grad=True)
        a.expand(3, 2).sum().backward()
        return a.grad.tolist(), a.grad.stride()
    assert_same(program)


def _produced_address(node_input):
    """Backward once; return (address of the gradient the node produced, a.grad)."""
    addresses = []
    y, a, index = node_input()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: addresses.append(grad_inputs[index].data_ptr()))
    y.sum().backward()
    return addresses[0], a.grad


def test_a_gradient_nobody_else_holds_is_stolen():
    # Would fail if stealing never happened (_STEAL_REFS too small, or the engine
    # holding on to the gradient): .grad would be a copy at another address.
    def make():
        a = ember.randn(4, 3, requires_grad=True)
        return ember.randn(5, 4) @ a, a, 1
    address, grad = _produced_address(make)
    assert grad.data_ptr() == address


def test_stealing_needs_the_exact_reference_count(monkeypatch):
    monkeypatch.setattr(accumulate, "_STEAL_REFS", accumulate._STEAL_REFS - 1)

    def make():
        a = ember.randn(4, 3, requires_grad=True)
        return ember.randn(5, 4) @ a, a, 1
    address, grad = _produced_address(make)
    assert grad.data_ptr() != address


@pytest.mark.parametrize("case", ["a_plus_b", "user_grad_leaf", "user_grad_clone", "view_grad"])
def test_shared_gradients_are_never_stolen(case):
    # Would fail if stealing aliased: each pair below must not share memory.
    a = ember.tensor(X, requires_grad=True)
    b = ember.tensor(X, requires_grad=True)
    g = ember.tensor([5.0, 6.0, 7.0], dtype=ember.float64)
    if case == "a_plus_b":
        (a + b).sum().backward()
        pairs = [(a.grad, b.grad)]
    elif case == "user_grad_leaf":
        a.backward(g)
        pairs = [(a.grad, g)]
    elif case == "user_grad_clone":
        a.clone().backward(g)
        pairs = [(a.grad, g)]
    else:
        wide = ember.ones(3, 1, dtype=ember.float64)
        a.unsqueeze(1).backward(wide)  # the gradient reaching `a` is a view of `wide`
        pairs = [(a.grad, wide)]
    for first, second in pairs:
        assert not np.shares_memory(first._data, second._data)
        before = second.tolist()
        first.zero_()
        assert second.tolist() == before


def test_two_tensors_over_one_array_are_not_stolen():
    a = ember.tensor(X, requires_grad=True)
    g = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    other = g.detach()  # a second tensor over the same array
    accumulate.accumulate_grad(a, other)
    assert not np.shares_memory(a.grad._data, g._data)


# NOTE [ The gradient layout contract ]: a leaf's first .grad takes the leaf's layout
# (dense leaves) or row-major (others), whatever layout the backward formula produced.
LEAVES = {
    "row_major": lambda lib, a: a,
    "channels_last": lambda lib, a: a.contiguous(memory_format=lib.channels_last),
    "permuted": lambda lib, a: a.permute(3, 0, 2, 1),
    "sliced": lambda lib, a: a[:, :, ::2],
}
BACKWARDS = {
    "prod_dim0": lambda x: x.prod(0),        # builds its gradient with dim 0 innermost
    "sum": lambda x: x.sum(1),               # an expanded gradient
    "exp": lambda x: x.exp(),                # a gradient laid out like the leaf
    "transpose": lambda x: x.transpose(0, 2).contiguous(),  # a transposed gradient
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("backward", sorted(BACKWARDS))
@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_first_grad_follows_the_layout_contract(leaf, backward, create_graph):
    values = np.random.default_rng(0).standard_normal((2, 3, 4, 5))

    def program(lib):
        a = LEAVES[leaf](lib, lib.tensor(values)).detach().requires_grad_()
        out = BACKWARDS[backward](a)
        out.backward(lib.ones_like(out), create_graph=create_graph)
        return a.grad.stride(), np.round(a.grad.detach().numpy(), 12).tolist(), a.grad.requires_grad
    assert_same(program)


def test_a_gradient_already_in_the_leafs_layout_is_stolen():
    # A channels_last leaf and a channels_last gradient: no copy (the contract holds).
    def make():
        a = ember.randn(2, 3, 4, 5).contiguous(memory_format=ember.channels_last).requires_grad_()
        return a.exp(), a, 0
    address, grad = _produced_address(make)
    assert grad.data_ptr() == address
    assert grad.stride() == (60, 1, 15, 3)
