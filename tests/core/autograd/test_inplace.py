"""In-place semantics (ember/native/support/_inplace.py, copy_slices.py, the version counter
checks of ember/autograd/graph.py) against torch on the same programs."""

import numpy as np
import pytest
from autograd_parity import assert_same, assert_same_error, both

import ember

X = np.arange(1.0, 13.0).reshape(3, 4) / 7
W = np.linspace(-1.0, 1.0, 4)


def version(lib, t):
    return t._version


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_saved_tensor_modified_raises_with_torch_message(dtype):
    def program(lib):
        a = lib.tensor(X.astype(dtype), requires_grad=True)
        x = a * 1
        y = x * x
        x.mul_(2)
        y.sum().backward()
    assert_same_error(program)


def test_saved_output_modified_raises_with_torch_message():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = a.exp()
        y.add_(1)
        y.sum().backward()
    assert_same_error(program)


def test_saved_leaf_modified_under_no_grad_raises_with_torch_message():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = a.sin()
        with lib.no_grad():
            a.mul_(2)
        y.sum().backward()
    assert_same_error(program)


def test_in_place_on_leaf_requiring_grad_raises():
    assert_same_error(lambda lib: lib.tensor(X, requires_grad=True).add_(1))


def test_in_place_on_view_of_leaf_requiring_grad_raises():
    assert_same_error(lambda lib: lib.tensor(X, requires_grad=True)[0].mul_(2))


def test_in_place_on_leaf_under_no_grad_is_allowed():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        with lib.no_grad():
            a.add_(1)
            a[0].mul_(2)
        return a.tolist(), a.requires_grad, a.is_leaf, a.grad_fn
    assert_same(program)


def test_data_escapes_the_version_check():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        y = a.sin()
        a.data.mul_(2)
        y.sum().backward()
        return np.round(a.grad.numpy(), 12).tolist(), version(lib, a)
    assert_same(program)


def test_views_share_the_version_counter():
    def program(lib):
        x = lib.tensor(X, requires_grad=True) * 1
        row, flat = x[1:], x.view(12)
        row.mul_(2)
        return version(lib, x), version(lib, row), version(lib, flat)
    assert_same(program)


def test_mul_keeps_the_old_value_for_the_other_gradient():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X + 1, requires_grad=True)
        x = a * 1
        x.mul_(b)
        x.sum().backward()
        return a.grad.tolist(), b.grad.tolist()
    assert_same(program)


def test_mul_by_itself_in_place_raises():
    def program(lib):
        x = lib.tensor(X, requires_grad=True) * 1
        x.mul_(x)
        x.sum().backward()
    assert_same_error(program)


PATTERNS = {
    "slice_row": lambda b, w: b[1].mul_(w),
    "slice_columns_broadcast": lambda b, w: b[:, 1:3].mul_(w[:2]),
    "select": lambda b, w: b.select(1, 2).mul_(w[:3]),
    "transpose_then_slice": lambda b, w: b.t()[1:3].mul_(w[:3]),
    "chain_of_views": lambda b, w: b[1:][:, ::2][0].mul_(w[:2]),
    "copy_into_row": lambda b, w: b[0].copy_(w.exp()),
    "two_writes": lambda b, w: (b[0].mul_(w), b[:, 1].add_(w[:3])),
    "write_then_read_view": lambda b, w: (b[0].mul_(w), b[0].exp_()),
    "setitem": lambda b, w: b.__setitem__((slice(None), 0), w[:3] * 2),
}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_in_place_on_views_gives_torch_gradients(pattern):
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        base = a * 1
        PATTERNS[pattern](base, w)
        (base * lib.tensor(X + 1)).sum().backward()
        return base.detach().numpy(), a.grad.numpy(), w.grad.numpy()
    for e, t in zip(*both(program)):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("pattern", ["slice_row", "select", "transpose_then_slice", "two_writes"])
def test_copy_slices_node_name(pattern):
    def program(lib):
        base = lib.tensor(X, requires_grad=True) * 1
        PATTERNS[pattern](base, lib.tensor(W, requires_grad=True))
        return base.grad_fn.name().split("::")[-1], base.is_leaf
    assert_same(program)


def test_base_not_requiring_grad_gets_history_from_written_value():
    def program(lib):
        base = lib.zeros(3, 4, dtype=lib.float64)
        w = lib.tensor(W, requires_grad=True)
        base[2, 1:3].add_(w[1:3])
        base[1].copy_(w * 2)
        (base * lib.tensor(X)).sum().backward()
        return w.grad.tolist(), base.requires_grad, base.is_leaf, base.grad_fn.name().split("::")[-1]
    assert_same(program)


def test_written_view_is_differentiated_through_its_base():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        view = (a * 1)[1]
        view.mul_(w)
        (view * 3).sum().backward()
        return a.grad.tolist(), w.grad.tolist(), view.grad_fn.name()
    assert_same(program)


def test_in_place_on_view_supports_create_graph():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        base = a * 1
        base[1].mul_(w)
        g, = lib.autograd.grad((base ** 2).sum(), w, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), a)
        return g.detach().numpy(), g2.numpy()
    for e, t in zip(*both(program)):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_gradcheck_through_in_place_on_a_view():
    def fn(a, w):
        base = a * 1
        base.t()[1:3].mul_(w[:3])
        return base.exp()
    a = ember.tensor(X, requires_grad=True)
    w = ember.tensor(W, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (a, w))
    assert ember.autograd.gradgradcheck(fn, (a, w))


# --- saved outputs, masked_fill_, freed indices (issue 11) ----------------------------


@pytest.mark.parametrize("second", ["sigmoid_", "mul_"])
def test_write_after_an_op_that_saved_its_output_raises(second):
    def program(lib):
        y = lib.ones(3, requires_grad=True) * 2
        y.sigmoid_()
        y.sigmoid_() if second == "sigmoid_" else y.mul_(2)
        y.sum().backward()

    assert_same_error(program)


def test_exp_then_add_raises_on_backward():
    def program(lib):
        y = lib.ones(3, requires_grad=True) * 2
        y.exp_()
        y.add_(1)
        y.sum().backward()

    assert_same_error(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_in_place_once_gives_torch_gradient(dtype):
    def program(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = x * 2
        y.sigmoid_()
        (y * y).sum().backward()
        return x.grad.tolist()

    ember_grad, torch_grad = both(program)
    np.testing.assert_allclose(ember_grad, torch_grad, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_masked_fill_in_place_on_non_leaf_backward(dtype):
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = x * 2
        y.masked_fill_(lib.tensor([True, False, True]), 0.0)
        (y * y).sum().backward()
        return x.grad.tolist(), y.grad_fn.name()

    assert_same(program)


@pytest.mark.parametrize("key", ["tensor", "list", "bool"])
def test_second_backward_through_index_raises(key):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        index = {"tensor": lib.tensor([0, 1]), "list": [0, 1], "bool": lib.tensor([True, False, True])}[key]
        s = x[index].sum()
        s.backward()
        s.backward()

    assert_same_error(program)


def test_second_backward_through_a_slice_is_allowed():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        s = x[1:].sum()
        s.backward()
        s.backward()
        return x.grad.tolist()

    assert_same(program)
