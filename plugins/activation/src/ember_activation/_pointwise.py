"""How a fused elementwise activation is defined: a forward op, a backward op, and
the second derivative written with ember ops.

PyTorch counterpart: the pairs ``gelu``/``gelu_backward``, ``silu``/``silu_backward``,
``elu``/``elu_backward`` ... of aten/src/ATen/native/Activation.cpp and their entries
in tools/autograd/derivatives.yaml (v2.13).

# NOTE [ Two ops per activation ]
# A composite such as ``0.5 * x * (1 + erf(x / sqrt(2)))`` records five graph nodes
# and five temporaries; a fused op records one. Its backward is a second fused op,
# ``activation::<name>_backward(grad, x)`` = ``grad * f'(x)``, so a training step
# costs two kernels per activation, as in PyTorch. The backward op is differentiable
# too: its own backward is ``gg * f'(x)`` for ``grad`` (the backward op again) and
# ``gg * grad * f''(x)`` for ``x``, with ``f''`` written with ember ops, so
# gradients of any order work (the third goes through the composite ``f''``).
"""

import functools

from ember import library
from ember.dtypes import is_floating_array
from ember.native.pointwise.unary import not_implemented_for, quiet, zero_where_not


def floating_only(kernel, kernel_name):
    """Wrap ``kernel`` so that integer and bool inputs raise PyTorch's NotImplementedError."""
    @functools.wraps(kernel)  # keeps the kernel's signature for ember.library.schema
    def run(xp, x, *rest, **attrs):
        if not is_floating_array(x.dtype):
            raise not_implemented_for(kernel_name, x.dtype)
        return kernel(xp, x, *rest, **attrs)
    return run


# NOTE [ Branch-free selection ]
# ``xp.where(mask, a, b)`` with a data-dependent mask costs a branch per element on the
# CPU, about ten times the price of an arithmetic ufunc. The kernels here select with
# the core's ``zero_where_not`` (a bitwise AND of the float bits with an all-ones or
# all-zeros mask) instead: exact, and a masked inf or NaN becomes 0 rather than NaN.


def select(xp, keep, a, b):
    """``where(keep, a, b)`` for floating arrays of ``keep``'s shape (NOTE [ Branch-free selection ])."""
    if not is_floating_array(a.dtype) or a.shape != keep.shape or b.shape != keep.shape or a.dtype != b.dtype:
        return xp.where(keep, a, b)
    ints = a.dtype.str.replace("f", "i")
    chosen = xp.bitwise_or(zero_where_not(xp, a, keep).view(ints), zero_where_not(xp, b, ~keep).view(ints))
    return chosen.view(a.dtype)


def define(name, forward, backward, second_derivative, *, kernel_name=None):
    """Build the ops ``activation::<name>`` and ``activation::<name>_backward``.

    Args:
        forward: kernel ``forward(xp, x, **attrs) -> f(x)``.
        backward: kernel ``backward(xp, grad, x, **attrs) -> grad * f'(x)``.
        second_derivative: ``second_derivative(x, **attrs) -> f''(x)``, an ember tensor
            (or None where ``f''`` is zero everywhere: piecewise-linear activations).
        kernel_name: the name in the dtype error (``"elu_cpu"``); None accepts any dtype.

    Returns:
        ``(forward_op, backward_op)`` (NOTE [ Two ops per activation ]).
    """
    if kernel_name is not None:
        forward = floating_only(forward, kernel_name)
    forward_op = library.custom_op(f"activation::{name}", save="inputs", opmath=True)(quiet(forward))
    backward_op = library.custom_op(f"activation::{name}_backward", save="inputs", opmath=True)(quiet(backward))

    def forward_backward(ctx, grad):
        (x,) = ctx.saved_inputs
        return (backward_op(grad, x, **ctx.attrs),)

    def backward_backward(ctx, grad_grad):
        grad, x = ctx.saved_inputs
        need_grad, need_x = ctx.needs_input_grad
        grad_of_grad = backward_op(grad_grad, x, **ctx.attrs) if need_grad else None
        grad_of_x = None
        if need_x:
            curvature = second_derivative(x, **ctx.attrs)
            grad_of_x = x.new_zeros(tuple(x.shape)) if curvature is None else grad_grad * grad * curvature
        return grad_of_grad, grad_of_x

    def backward_jvp(ctx, grad_tangent, x_tangent):
        # grad * f'(x) is elementwise in both inputs: the terms of its backward, on the tangents
        grad, x = ctx.saved_inputs
        total = backward_op(grad_tangent, x, **ctx.attrs) if grad_tangent is not None else None
        if x_tangent is not None:
            curvature = second_derivative(x, **ctx.attrs)
            if curvature is not None:
                term = x_tangent * grad * curvature
                total = term if total is None else total + term
        return total if total is not None else grad * 0

    library.register_autograd(forward_op, forward_backward)
    library.register_autograd(backward_op, backward_backward)
    # f is elementwise: its backward on the tangent is its jvp (NOTE [ Forward grads at the
    # dispatcher ] in ember/autograd/forward_grad.py)
    library.register_jvp(forward_op, "auto_element_wise")
    library.register_jvp(backward_op, backward_jvp)
    return forward_op, backward_op


def run_inplace(input, op, **attrs):
    """``op(input, **attrs)`` written into ``input``, with PyTorch's in-place rules
    (a leaf that requires grad is refused; views rebase their base's history)."""
    from ember.native.support._inplace import check_inplace, write_result

    check_inplace(input)
    return write_result(input, op(input, **attrs))
