"""``ember.autograd.Function`` (ember/autograd/function.py) against
``torch.autograd.Function`` on the same programs."""

import numpy as np
import pytest
import torch
from autograd_parity import assert_same, both, raised

import ember

X = np.array([1.0, -2.0, 0.5])
Y = np.array([3.0, 4.0, -1.5])


def make_mul_add(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_backward(x, y)
            ctx.k = k
            return x * y + k, x > 0

        @staticmethod
        def backward(ctx, grad, grad_mask):
            x, y = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            return (grad * y if ctx.needs_input_grad[0] else None,
                    grad * x if ctx.needs_input_grad[1] else None, None)

    seen = []
    return MulAdd, seen


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctx_save_needs_input_grad_non_tensor_args(dtype):
    def program(lib):
        MulAdd, seen = make_mul_add(lib)
        x = lib.tensor(X.astype(dtype), requires_grad=True)
        y = lib.tensor(Y.astype(dtype))
        out, mask = MulAdd.apply(x, y, 5)
        out.sum().backward()
        return (out.tolist(), mask.requires_grad, str(mask.dtype).split(".")[1], x.grad.tolist(), seen,
                type(out.grad_fn).__name__, out.grad_fn.name(), out.is_leaf)
    assert_same(program)


def test_mark_non_differentiable_and_multiple_outputs():
    def program(lib):
        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, index = x.sort()
                ctx.mark_non_differentiable(index)
                ctx.save_for_backward(index)
                return values, index

            @staticmethod
            def backward(ctx, grad_values, grad_index):
                index, = ctx.saved_tensors
                return lib.zeros_like(grad_values).scatter(0, index, grad_values)

        x = lib.tensor(X, requires_grad=True)
        values, index = Sort.apply(x)
        (values * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return x.grad.tolist(), index.requires_grad, values.requires_grad
    assert_same(program)


def make_add_one(lib):
    class AddOne(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return AddOne


def test_mark_dirty_rebases_history_and_bumps_version():
    def program(lib):
        a = lib.tensor(X, requires_grad=True)
        x = a * 1
        y = make_add_one(lib).apply(x)
        y.sum().backward()
        version = x._version
        return y is x, a.grad.tolist(), x.grad_fn.name(), version, x.tolist()
    assert_same(program)


def test_mark_dirty_on_leaf_raises():
    def program(lib):
        make_add_one(lib).apply(lib.tensor(X, requires_grad=True))
    assert raised(program, ember) == raised(program, torch)


def test_once_differentiable_grad_is_not_differentiable():
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return 2 * x * grad

        x = lib.tensor(X, requires_grad=True)
        g, = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        return g.tolist(), g.requires_grad, g.grad_fn
    assert_same(program)


def test_differentiable_backward_gives_second_derivative():
    def program(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        x = lib.tensor(X, requires_grad=True)
        g, = lib.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        return g.detach().numpy(), g2.numpy()
    for e, t in zip(*both(program)):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_input_returned_as_is_is_a_new_tensor_viewing_it():
    def program(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 3

        x = lib.tensor(X, requires_grad=True)
        y = Identity.apply(x)
        y.sum().backward()
        return y is x, y.is_leaf, y._is_view(), y._base is x, type(y.grad_fn).__name__, x.grad.tolist()
    assert_same(program)


def test_wrong_number_of_gradients_raises():
    def program(lib):
        class Add(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = lib.tensor(X, requires_grad=True)
        Add.apply(x, x).sum().backward()
    assert raised(program, ember) == raised(program, torch)


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_gradient_materialized_or_none(materialize):
    def program(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.set_materialize_grads(materialize)
                return x * 2, y * 3

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                seen.append((grad_a is None, grad_b is None))
                return (None if grad_a is None else grad_a * 2, None if grad_b is None else grad_b * 3)

        seen = []
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y, requires_grad=True)
        a, b = Two.apply(x, y)
        a.sum().backward()
        return seen, x.grad.tolist(), None if y.grad is None else y.grad.tolist()
    assert_same(program)


def test_keyword_and_default_non_tensor_arguments():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=2.0):
                ctx.scale = scale
                return x * scale

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.scale, None

        x = lib.tensor(X, requires_grad=True)
        Scale.apply(x, 4.0).sum().backward()
        first = x.grad.tolist()
        x.grad = None
        Scale.apply(x).sum().backward()
        return first, x.grad.tolist()
    assert_same(program)


def test_no_input_requires_grad_records_nothing():
    def program(lib):
        MulAdd, _ = make_mul_add(lib)
        out, _ = MulAdd.apply(lib.tensor(X), lib.tensor(Y), 1)
        return out.requires_grad, out.grad_fn
    assert_same(program)


def test_saved_input_modified_in_place_raises_at_backward():
    def program(lib):
        MulAdd, _ = make_mul_add(lib)
        a = lib.tensor(X, requires_grad=True)
        x = a * 1
        out, _ = MulAdd.apply(x, lib.tensor(Y), 0)
        x.add_(1)
        out.sum().backward()
    assert raised(program, ember) == raised(program, torch)


def test_gradcheck_on_a_custom_function():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x ** 3 * y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * 3 * x ** 2 * y, grad * x ** 3

    x = ember.tensor(X, requires_grad=True)
    y = ember.tensor(Y, requires_grad=True)
    assert ember.autograd.gradcheck(Cube.apply, (x, y))
    assert ember.autograd.gradgradcheck(Cube.apply, (x, y))


def test_node_of_a_custom_function_prints_with_its_module_as_in_torch():
    def printed(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                return grad

        y = Cube.apply(lib.ones(2, requires_grad=True))
        node = repr(y.grad_fn)
        return node[:node.index(" at 0x")].replace("torch", "ember"), type(y.grad_fn).__name__

    assert printed(ember) == printed(torch) == ("<ember.autograd.function.CubeBackward object", "CubeBackward")


def test_setup_context_style_function_as_torch():
    # torch 2.0's style: forward takes no ctx; setup_context(ctx, inputs, output) fills it.
    def make(lib):
        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x.exp() * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                _, k = inputs
                ctx.k = k
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, grad):
                (out,) = ctx.saved_tensors
                return grad * out, None

        return Scaled

    grads = []
    for lib in (torch, ember):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (make(lib).apply(x, 3.0) ** 2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])
