"""Views and in-place writes in autograd (ember/autograd/views.py), against torch: a
view's grad_fn after its base changed, views that may not be written, retained
gradients that follow a rebase, and ``_version``.
"""

import pytest
import torch
from autograd_parity import assert_same, assert_same_error, both

import ember


def _grads(program):
    ember_result, torch_result = both(program)
    assert len(ember_result) == len(torch_result)
    for mine, theirs in zip(ember_result, torch_result):
        if theirs is None:
            assert mine is None
        else:
            assert mine is not None
            torch.testing.assert_close(torch.from_numpy(mine.detach().numpy()), theirs.detach())


# --- a view taken before an in-place write on its base ----------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_view_taken_before_base_write_sees_the_write(dtype):
    def program(lib):
        w = lib.ones(3, dtype=getattr(lib, dtype), requires_grad=True)
        b = w.clone()
        v = b[:2]
        b.mul_(3)
        v.sum().backward()
        return (w.grad,)

    _grads(program)


def test_regenerated_grad_fn_is_as_strided_backward():
    def program(lib):
        b = lib.ones(3, requires_grad=True).clone()
        v = b[:2]
        before = v.grad_fn.name()
        b.mul_(3)
        return before, v.grad_fn.name(), type(v.grad_fn).__name__, v._version

    assert_same(program)


@pytest.mark.parametrize("write", ["base", "sibling", "no_grad_base"])
def test_stale_view_gradients_match_torch(write):
    # Several views of one base; a write through the base or through another view.
    def program(lib):
        w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        k = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = w * 1.0
        row, col = b[1], b[:, 2]
        if write == "base":
            b.mul_(k)
        elif write == "sibling":
            b[0].add_(k)
        else:
            with lib.no_grad():
                b.mul_(2.0)
        (row * row).sum().backward(retain_graph=True)
        (col ** 3).sum().backward()
        return w.grad, k.grad

    _grads(program)


def test_view_of_base_that_later_requires_grad():
    def program(lib):
        w = lib.ones(3, requires_grad=True)
        b = lib.zeros(3)
        v = b[:2]
        b.add_(w)
        return v.requires_grad, v.grad_fn.name()

    assert_same(program)


def test_view_made_under_no_grad_requires_grad_like_its_base():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = x[:2]
        return v.requires_grad, v.grad_fn, v.is_leaf, v._is_view(), v._base is x

    assert_same(program)


# --- views that may not be written in place ---------------------------------------


MULTI_OUTPUT = {
    "unbind": lambda t: t.unbind(0),
    "split": lambda t: t.split(1),
    "split_with_sizes": lambda t: t.split([1, 2]),
    "chunk": lambda t: t.chunk(3),
}


@pytest.mark.parametrize("make", MULTI_OUTPUT, ids=list(MULTI_OUTPUT))
def test_multi_output_view_written_in_place_raises(make):
    def program(lib):
        pieces = MULTI_OUTPUT[make](lib.ones(3, 2, requires_grad=True).clone())
        pieces[0].mul_(2)

    assert_same_error(program)


@pytest.mark.parametrize("make", MULTI_OUTPUT, ids=list(MULTI_OUTPUT))
def test_multi_output_view_of_plain_tensor_written_with_grad_operand_raises(make):
    def program(lib):
        pieces = MULTI_OUTPUT[make](lib.ones(3, 2))
        pieces[0].mul_(lib.ones(2, requires_grad=True))

    assert_same_error(program)


@pytest.mark.parametrize("make", MULTI_OUTPUT, ids=list(MULTI_OUTPUT))
def test_multi_output_view_after_base_write_raises_on_grad_fn(make):
    def program(lib):
        x = lib.ones(3, 2, requires_grad=True).clone()
        pieces = MULTI_OUTPUT[make](x)
        x.mul_(2)
        return pieces[0].grad_fn

    assert_same_error(program)


@pytest.mark.parametrize("make", MULTI_OUTPUT, ids=list(MULTI_OUTPUT))
def test_view_of_multi_output_view_inherits_the_rule(make):
    def program(lib):
        pieces = MULTI_OUTPUT[make](lib.ones(3, 2, requires_grad=True).clone())
        pieces[0][:1].mul_(2)

    assert_same_error(program)


@pytest.mark.parametrize("make", MULTI_OUTPUT, ids=list(MULTI_OUTPUT))
def test_multi_output_views_may_be_written_outside_autograd(make):
    def program(lib):
        x = lib.ones(3, 2, requires_grad=True).clone()
        plain = MULTI_OUTPUT[make](lib.ones(3, 2))
        plain[0].mul_(2)  # nothing requires grad
        with lib.no_grad():
            MULTI_OUTPUT[make](x)[0].mul_(3)
        return plain[0].tolist(), x.tolist()

    assert_same(program)


def test_tensor_split_pieces_may_be_written():
    def program(lib):
        w = lib.ones(3, 2, requires_grad=True)
        x = w.clone()
        x.tensor_split(3)[1].mul_(5)
        x.sum().backward()
        return w.grad.tolist()

    assert_same(program)


def test_no_grad_view_written_with_grad_on_raises():
    def program(lib):
        x = lib.ones(3, requires_grad=True).clone()
        with lib.no_grad():
            v = x[:2]
        v.mul_(2)

    assert_same_error(program)


def test_no_grad_view_after_base_write_raises_on_grad_fn():
    def program(lib):
        x = lib.ones(3, requires_grad=True).clone()
        with lib.no_grad():
            v = x[:2]
        x.mul_(2)
        return v.grad_fn

    assert_same_error(program)


# --- retained gradients and in-place writes ----------------------------------------


def test_backward_inputs_counts_a_retained_gradient_once():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward(inputs=[y])
        return y.grad.tolist(), x.grad, y.retains_grad

    assert_same(program)


def test_backward_inputs_retains_a_non_leaf():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        (y * y).sum().backward(inputs=[y])
        return y.grad.tolist(), y.retains_grad

    assert_same(program)


def test_retained_gradient_is_the_new_versions_after_in_place():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        (y * y).sum().backward()
        return y.grad.tolist(), y.retains_grad, x.grad.tolist()

    assert_same(program)


def test_retained_base_gradient_after_write_through_a_view():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y[:2].mul_(3)
        (y * y).sum().backward()
        return y.grad.tolist(), x.grad.tolist()

    assert_same(program)


def test_retained_view_gradient_after_base_write():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        v = y[:2]
        v.retain_grad()
        y.mul_(3)
        (v * v).sum().backward()
        return v.grad.tolist(), x.grad.tolist()

    assert_same(program)


def test_tensor_hook_stays_with_the_old_version():
    def program(lib):
        seen = []
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.mul_(3)
        y.sum().backward()
        return seen

    assert_same(program)


# --- the version counter --------------------------------------------------------------


def test_version_is_an_int_shared_by_views():
    def program(lib):
        x = lib.zeros(4)
        v = x[1:]
        versions = [type(x._version).__name__, x._version]
        v.add_(1)
        x[0] = 2.0
        return versions + [x._version, v._version, x.detach()._version]

    assert_same(program)


def test_view_dtype_shares_the_version_but_is_no_view():
    def program(lib):
        x = lib.ones(2)
        y = x.view(lib.int32)
        y.add_(1)
        return x._version, y._is_view(), y._base is None

    assert_same(program)


def test_ember_counter_is_the_shared_list():
    x = ember.zeros(2)
    assert x[1:]._version_counter is x._version_counter
