"""Piecewise-linear activations: relu, relu6, leaky_relu, rrelu, prelu, hardtanh, threshold,
hardshrink, softshrink.

PyTorch counterpart: the functional forms in torch/nn/functional.py and the kernels
of aten/src/ATen/native/Activation.cpp (hardtanh, leaky_relu, rrelu_with_noise, prelu,
threshold, hardshrink, softshrink) (v2.13).

Their derivatives are piecewise constant, so each backward op is a mask and the
second derivative is zero. ``relu`` is the core's ``aten::relu`` op.
"""

import numpy as np

import ember
from ember.amp.state import composite_inputs
from ember.dtypes import finfo_of, is_floating_array
from ember.native.pointwise.unary import not_implemented_for, zero_where_not
from ember.native.random.transformations import uniform_real
from ember.random import generator_or_default
from ember_activation._pointwise import define, run_inplace, select

# --- relu ------------------------------------------------------------------------


def relu(input, inplace=False):
    """``max(input, 0)``, the core's ``aten::relu`` op (backward: ``threshold_backward``).

    Args:
        inplace: overwrite ``input`` with the result.

    >>> import ember
    >>> relu(ember.tensor([-1., 0., 2.]))
    tensor([0., 0., 2.])
    """
    return input.relu_() if inplace else ember.relu(input)


def relu_(input):
    """In-place :func:`relu`."""
    return input.relu_()


# --- hardtanh and relu6 ----------------------------------------------------------


def _hardtanh_kernel(xp, x, *, min_val, max_val):
    if x.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return xp.minimum(xp.maximum(x, min_val), max_val).astype(x.dtype, copy=False)


def _hardtanh_backward_kernel(xp, grad, x, *, min_val, max_val):
    # Zero on the bounds themselves, as PyTorch (clamp's gradient is one there); NaN passes.
    return zero_where_not(xp, grad, ~((x <= min_val) | (x >= max_val)))


HARDTANH, HARDTANH_BACKWARD = define("hardtanh", _hardtanh_kernel, _hardtanh_backward_kernel,
                                     lambda x, **attrs: None)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(input, min_val, max_val)``, with gradient 0 on and outside the bounds.

    >>> import ember
    >>> hardtanh(ember.tensor([-2., 0.5, 2.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if inplace:
        return run_inplace(input, HARDTANH, min_val=min_val, max_val=max_val)
    return HARDTANH(input, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return run_inplace(input, HARDTANH, min_val=min_val, max_val=max_val)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``: :func:`hardtanh` with bounds 0 and 6.

    >>> import ember
    >>> relu6(ember.tensor([-1., 3., 9.]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


# --- leaky_relu ------------------------------------------------------------------


def _leaky_relu_kernel(xp, x, *, negative_slope):
    return select(xp, x > 0, x, x * negative_slope)


def _leaky_relu_backward_kernel(xp, grad, x, *, negative_slope):
    return select(xp, x > 0, grad, grad * negative_slope)


LEAKY_RELU, LEAKY_RELU_BACKWARD = define("leaky_relu", _leaky_relu_kernel, _leaky_relu_backward_kernel,
                                         lambda x, **attrs: None, kernel_name="leaky_relu_cpu")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, ``negative_slope * input`` elsewhere.

    >>> import ember
    >>> leaky_relu(ember.tensor([-100., 1.]))
    tensor([-1.,  1.])
    """
    if inplace:
        return run_inplace(input, LEAKY_RELU, negative_slope=negative_slope)
    return LEAKY_RELU(input, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return run_inplace(input, LEAKY_RELU, negative_slope=negative_slope)


# --- rrelu -----------------------------------------------------------------------


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each non-positive element gets its own slope drawn
    from U(lower, upper) (ember's default generator, PyTorch's numbers: one double-precision
    draw per non-positive element, in row-major order); in eval the slope is their mean.
    The gradient is the drawn slope (1 where positive).

    >>> import ember
    >>> rrelu(ember.tensor([-1., 2.]))
    tensor([-0.2292,  2.0000])
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = _rrelu_noise(input, lower, upper)
    return input.mul_(noise) if inplace else input * noise


def _rrelu_noise(input, lower, upper):
    """The slopes: a draw from U(lower, upper) where ``input <= 0``, elsewhere 1 (NaN
    included), the bounds rounded to the computing type first (float32 for float32 and half)."""
    opmath = np.float64 if input.dtype is ember.float64 else np.float32
    host = input.detach().contiguous().numpy().reshape(-1)
    negative = host <= 0
    noise = np.ones(host.shape, dtype=input.dtype.np)
    drawn = uniform_real(generator_or_default(None), int(negative.sum()), opmath(lower), opmath(upper))
    noise[negative] = drawn.astype(opmath)
    return ember.from_numpy(noise.reshape(tuple(input.shape))).to(input.device)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


# --- prelu -----------------------------------------------------------------------


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel (dim 1): ``max(0, x) + weight * min(0, x)``.

    Args:
        weight: 1-D, one element or one per channel (``input.shape[1]``).

    >>> import ember
    >>> prelu(ember.tensor([[-2., 2.]]), ember.tensor([0.25]))
    tensor([[-0.5000,  2.0000]])
    """
    input, weight = composite_inputs("prelu", input, weight)  # on autocast's lower-precision list
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    count = weight.numel()
    if input.ndim == 0 and count != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if count != 1 and count != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{count} and channel size = {channels}.")
    # One slope broadcasts as a scalar (a 0-d input stays 0-d); C slopes along dim 1.
    shape = () if count == 1 else (count,) + (1,) * (input.ndim - 2)
    weight = weight.reshape(shape)
    # One where: the slope's gradient is x where x <= 0, reduced over the broadcast dims.
    return ember.where(input > 0, input, weight * input)


# --- threshold -------------------------------------------------------------------


def _threshold_kernel(xp, x, *, threshold, value):
    if x.dtype.kind == "b":
        raise not_implemented_for("threshold_cpu", x.dtype)
    # Written as "not x <= threshold", so NaN stays NaN, as in PyTorch.
    if not is_floating_array(x.dtype):
        return xp.where(x <= threshold, value, x).astype(x.dtype, copy=False)
    return select(xp, ~(x <= threshold), x, xp.full_like(x, value))


def _threshold_backward_kernel(xp, grad, x, *, threshold, value):
    return zero_where_not(xp, grad, ~(x <= threshold))


THRESHOLD, THRESHOLD_BACKWARD = define("threshold", _threshold_kernel, _threshold_backward_kernel,
                                       lambda x, **attrs: None)


def threshold(input, threshold, value, inplace=False):
    """``input`` where it is greater than ``threshold``, ``value`` elsewhere.

    >>> import ember
    >>> threshold(ember.tensor([0.5, 2.]), 1.0, -7.0)
    tensor([-7.,  2.])
    """
    if inplace:
        return run_inplace(input, THRESHOLD, threshold=threshold, value=value)
    return THRESHOLD(input, threshold=threshold, value=value)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return run_inplace(input, THRESHOLD, threshold=threshold, value=value)


# --- hardshrink and softshrink ---------------------------------------------------


def _hardshrink_kernel(xp, x, *, lambd):
    return zero_where_not(xp, x, ~((x >= -lambd) & (x <= lambd)))


def _shrink_backward_kernel(xp, grad, x, *, lambd):
    return zero_where_not(xp, grad, ~((x >= -lambd) & (x <= lambd)))


HARDSHRINK, HARDSHRINK_BACKWARD = define("hardshrink", _hardshrink_kernel, _shrink_backward_kernel,
                                         lambda x, **attrs: None, kernel_name="hardshrink_cpu")


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, 0 elsewhere.

    >>> import ember
    >>> hardshrink(ember.tensor([-1., 0.2, 0.7]))
    tensor([-1.0000,  0.0000,  0.7000])
    """
    return HARDSHRINK(input, lambd=lambd)


def _softshrink_kernel(xp, x, *, lambd):
    # x - lambd above, x + lambd below, exactly 0 between; NaN stays NaN.
    return x - xp.clip(x, -lambd, lambd)


SOFTSHRINK, SOFTSHRINK_BACKWARD = define("softshrink", _softshrink_kernel, _shrink_backward_kernel,
                                         lambda x, **attrs: None, kernel_name="softshrink_check")


def softshrink(input, lambd=0.5):
    """Move ``input`` towards 0 by ``lambd``, stopping at 0: ``sign(x) * max(|x| - lambd, 0)``.

    >>> import ember
    >>> softshrink(ember.tensor([-1., 0.2, 0.75]))
    tensor([-0.5000,  0.0000,  0.2500])
    """
    if lambd < 0:
        from ember.native.support._inplace import _type_name

        limit = float(finfo_of(input._data.dtype).max) if input.dtype.is_floating_point else lambd
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{_type_name(input._data.dtype)}, but found {lambd:g}")
    return SOFTSHRINK(input, lambd=lambd)


OPS = (HARDTANH, HARDTANH_BACKWARD, LEAKY_RELU, LEAKY_RELU_BACKWARD, THRESHOLD, THRESHOLD_BACKWARD, HARDSHRINK,
       HARDSHRINK_BACKWARD, SOFTSHRINK, SOFTSHRINK_BACKWARD)
