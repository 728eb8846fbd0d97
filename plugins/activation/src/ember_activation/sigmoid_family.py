"""Smooth gates built on the sigmoid: sigmoid, tanh, silu, mish, softplus, logsigmoid,
the hard (piecewise-linear) hardsigmoid and hardswish, softsign and tanhshrink.

PyTorch counterpart: the functional forms in torch/nn/functional.py and the kernels
of aten/src/ATen/native/cpu/Activation.cpp (silu, mish, softplus, log_sigmoid,
hardsigmoid, hardswish) (v2.13).

# NOTE [ Stable softplus ]
# ``log(1 + exp(z))`` overflows for large z and loses everything for z below about
# -37 in float64. ``max(z, 0) + log1p(exp(-|z|))`` is the same function and only ever
# exponentiates a non-positive number; softplus, mish and logsigmoid use it. The
# sigmoid is ``1 / (1 + exp(-z))``: where exp overflows to inf the result is the exact
# limit 0, never NaN, and no branch per element is needed.
"""

import ember
from ember.native.pointwise.unary import zero_where_not
from ember_activation._pointwise import define, run_inplace, select

# NOTE [ One buffer per kernel ]
# ``1 / (1 + exp(-z))`` written as an expression makes a fresh array at every step:
# four passes that each write a new feature-map-sized buffer (fresh pages, where the
# allocator does not cache). The sigmoid and SiLU kernels allocate their result once
# and run the later steps in place with ``out=``, with the same roundings step for
# step as the expression (the SiLU forward divides, ``x / (1 + exp(-x))``, as
# PyTorch's kernel does). In one process on yolo_nano this was 3 to 9% of the
# inference time.


def _one_plus_exp_minus(xp, z):
    """``1 + exp(-z)`` in one fresh array (NOTE [ One buffer per kernel ])."""
    s = xp.negative(z, out=xp.empty_like(z))  # out=: a 0-d array stays an array, not a scalar
    xp.exp(s, out=s)
    s += 1
    return s


def _sigmoid(xp, z):
    """``1 / (1 + exp(-z))`` in one fresh array (NOTE [ One buffer per kernel ])."""
    # exp(-z) may overflow to inf for very negative z; 1 / inf is then the exact limit 0.
    s = _one_plus_exp_minus(xp, z)
    return xp.reciprocal(s, out=s)


def _times(xp, grad, factor):
    """``grad * factor``, written into ``factor`` (a kernel's own temporary) when the
    product has its dtype and shape."""
    if grad.dtype == factor.dtype and grad.shape == factor.shape:
        return xp.multiply(factor, grad, out=factor)
    return grad * factor


def _softplus(xp, z):
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))


# --- sigmoid, tanh: the core's ops ---------------------------------------------


def sigmoid(input):
    """``1 / (1 + exp(-input))``, the core's ``aten::sigmoid``.

    >>> import ember
    >>> sigmoid(ember.tensor([0.]))
    tensor([0.5000])
    """
    return ember.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent, the core's ``aten::tanh``.

    >>> import ember
    >>> tanh(ember.tensor([0.]))
    tensor([0.])
    """
    return ember.tanh(input)


# --- silu ------------------------------------------------------------------------


def _silu_kernel(xp, x):
    # x / (1 + exp(-x)), PyTorch's formula, in one buffer (NOTE [ One buffer per kernel ])
    out = _one_plus_exp_minus(xp, x)
    return xp.divide(x, out, out=out)


def _silu_backward_kernel(xp, grad, x):
    # grad * s * (1 + x * (1 - s)), s = sigmoid(x), in two buffers
    s = _sigmoid(xp, x)
    slope = xp.subtract(1, s, out=xp.empty_like(s))  # out=: a 0-d array stays an array
    slope *= x
    slope += 1
    slope *= s
    return _times(xp, grad, slope)


def _silu_second_derivative(x):
    s = x.sigmoid()
    return s * (1 - s) * (2 + x * (1 - 2 * s))


SILU, SILU_BACKWARD = define("silu", _silu_kernel, _silu_backward_kernel, _silu_second_derivative,
                             kernel_name="silu_cpu")


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (also called swish).

    >>> import ember
    >>> silu(ember.tensor([-1., 0., 1.]))
    tensor([-0.2689,  0.0000,  0.7311])
    """
    return _maybe_inplace(SILU, input, inplace)


# --- softplus --------------------------------------------------------------------


def _softplus_kernel(xp, x, *, beta, threshold):
    z = x * beta
    return select(xp, z > threshold, x, (_softplus(xp, z) / beta).astype(x.dtype, copy=False))


def _softplus_backward_kernel(xp, grad, x, *, beta, threshold):
    z = x * beta
    return select(xp, z > threshold, grad, grad * _sigmoid(xp, z))


def _softplus_second_derivative(x, *, beta, threshold):
    s = (x * beta).sigmoid()
    return ember.where(x * beta > threshold, 0.0, s * (1 - s) * beta)


SOFTPLUS, SOFTPLUS_BACKWARD = define("softplus", _softplus_kernel, _softplus_backward_kernel,
                                     _softplus_second_derivative, kernel_name="softplus_cpu")


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (NOTE [ Stable softplus ]).

    >>> import ember
    >>> softplus(ember.tensor([0., 30.]))
    tensor([ 0.6931, 30.0000])
    """
    return SOFTPLUS(input, beta=beta, threshold=threshold)


# --- mish ------------------------------------------------------------------------


def _mish_kernel(xp, x):
    return x * xp.tanh(_softplus(xp, x))


def _mish_backward_kernel(xp, grad, x):
    s = _sigmoid(xp, x)
    t = xp.tanh(_softplus(xp, x))
    return grad * (t + x * s * (1 - t * t))


def _mish_second_derivative(x):
    # f' = t + x s (1 - t^2) with t = tanh(softplus(x)), t' = (1 - t^2) s.
    s = x.sigmoid()
    t = softplus(x).tanh()
    return (1 - t * t) * s * (2 + x * (1 - s) - 2 * x * t * s)


MISH, MISH_BACKWARD = define("mish", _mish_kernel, _mish_backward_kernel, _mish_second_derivative,
                             kernel_name="mish_cpu")


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``.

    >>> import ember
    >>> mish(ember.tensor([-1., 0., 1.]))
    tensor([-0.3034,  0.0000,  0.8651])
    """
    return _maybe_inplace(MISH, input, inplace)


# --- logsigmoid ------------------------------------------------------------------


def _logsigmoid_kernel(xp, x):
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _logsigmoid_backward_kernel(xp, grad, x):
    return grad * _sigmoid(xp, -x)


def _logsigmoid_second_derivative(x):
    s = x.sigmoid()
    return -s * (1 - s)


LOG_SIGMOID, LOG_SIGMOID_BACKWARD = define("log_sigmoid", _logsigmoid_kernel, _logsigmoid_backward_kernel,
                                           _logsigmoid_second_derivative, kernel_name="log_sigmoid_cpu")


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, finite for every finite x (NOTE [ Stable softplus ]).

    >>> import ember
    >>> logsigmoid(ember.tensor([-200., 0.]))
    tensor([-200.0000,   -0.6931])
    """
    return LOG_SIGMOID(input)


# --- hardsigmoid and hardswish ---------------------------------------------------


def _hardsigmoid_kernel(xp, x):
    return xp.minimum(xp.maximum(x + 3, 0), 6) / 6


def _hardsigmoid_backward_kernel(xp, grad, x):
    return zero_where_not(xp, grad / 6, (x > -3) & (x < 3))


HARDSIGMOID, HARDSIGMOID_BACKWARD = define("hardsigmoid", _hardsigmoid_kernel, _hardsigmoid_backward_kernel,
                                           lambda x: None, kernel_name="hardsigmoid_cpu")


def hardsigmoid(input, inplace=False):
    """``clamp(x / 6 + 1/2, 0, 1)``, a piecewise-linear sigmoid.

    >>> import ember
    >>> hardsigmoid(ember.tensor([-4., 0., 1.5]))
    tensor([0.0000, 0.5000, 0.7500])
    """
    return _maybe_inplace(HARDSIGMOID, input, inplace)


def _hardswish_kernel(xp, x):
    return x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6


def _hardswish_backward_kernel(xp, grad, x):
    # 0 up to -3 included, x / 3 + 1/2 between, 1 from 3 on (and for NaN), as PyTorch.
    slope = zero_where_not(xp, x / 3 + 0.5, (x > -3) & (x < 3)) + ~(x < 3)
    return grad * slope


def _hardswish_second_derivative(x):
    return ember.where((x > -3) & (x < 3), 1.0 / 3.0, 0.0).to(x.dtype)


HARDSWISH, HARDSWISH_BACKWARD = define("hardswish", _hardswish_kernel, _hardswish_backward_kernel,
                                       _hardswish_second_derivative, kernel_name="hardswish_cpu")


def hardswish(input, inplace=False):
    """``x * hardsigmoid(x)`` (MobileNetV3).

    >>> import ember
    >>> hardswish(ember.tensor([-4., 1., 4.]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    return _maybe_inplace(HARDSWISH, input, inplace)


# --- softsign, tanhshrink: composites of core ops ------------------------------


def softsign(input):
    """``x / (1 + |x|)``.

    >>> import ember
    >>> softsign(ember.tensor([-1., 3.]))
    tensor([-0.5000,  0.7500])
    """
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``x - tanh(x)``.

    >>> import ember
    >>> tanhshrink(ember.tensor([0., 1.]))
    tensor([0.0000, 0.2384])
    """
    return input - input.tanh()


def _maybe_inplace(op, input, inplace):
    if inplace:
        return run_inplace(input, op)
    return op(input)


OPS = (SILU, SILU_BACKWARD, SOFTPLUS, SOFTPLUS_BACKWARD, MISH, MISH_BACKWARD, LOG_SIGMOID, LOG_SIGMOID_BACKWARD,
       HARDSIGMOID, HARDSIGMOID_BACKWARD, HARDSWISH, HARDSWISH_BACKWARD)
