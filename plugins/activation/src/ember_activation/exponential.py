"""The exponential linear units: elu, selu, celu, from one pair of kernels.

PyTorch counterpart: ``elu``/``elu_backward`` in aten/src/ATen/native/Activation.cpp
and torch/nn/functional.py's ``elu``, ``selu``, ``celu`` (v2.13).

All three are ``scale * x`` for ``x > 0`` and ``scale * alpha * (exp(input_scale * x) - 1)``
elsewhere: ELU has ``scale = input_scale = 1``; SELU fixed constants that keep
activations at zero mean and unit variance; CELU ``input_scale = 1 / alpha``.
"""

import ember
from ember_activation._pointwise import define, run_inplace, select

# SELU's constants (Klambauer et al., "Self-Normalizing Neural Networks", 2017).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _elu_kernel(xp, x, *, alpha, scale, input_scale):
    # exp only of non-positive numbers: the unused branch never overflows.
    # The positive branch is "not x <= 0", so NaN takes it (PyTorch's slope there is scale).
    negative = xp.expm1(xp.minimum(x, 0) * input_scale) * (alpha * scale)
    return select(xp, ~(x <= 0), x * scale, negative)


def _elu_backward_kernel(xp, grad, x, *, alpha, scale, input_scale):
    slope = xp.exp(xp.minimum(x, 0) * input_scale) * (alpha * scale * input_scale)
    return select(xp, ~(x <= 0), grad * scale, grad * slope)


def _elu_second_derivative(x, *, alpha, scale, input_scale):
    # Only x < 0 curves: at the kink x == 0 (where the first derivative takes the
    # negative branch) PyTorch's elu_double_backward masks with x < 0, so it is 0 there.
    curve = (x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale * input_scale)
    return ember.where(x < 0, curve, 0.0)


ELU, ELU_BACKWARD = define("elu", _elu_kernel, _elu_backward_kernel, _elu_second_derivative,
                           kernel_name="elu_cpu")
# The same kernels under CELU's name, so its grad_fn is CeluBackward0 as in PyTorch.
CELU, CELU_BACKWARD = define("celu", _elu_kernel, _elu_backward_kernel, _elu_second_derivative,
                             kernel_name="elu_cpu")


def _elu(input, inplace, alpha, scale, input_scale, op=ELU):
    if inplace:
        return run_inplace(input, op, alpha=alpha, scale=scale, input_scale=input_scale)
    return op(input, alpha=alpha, scale=scale, input_scale=input_scale)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import ember
    >>> elu(ember.tensor([-1., 2.]))
    tensor([-0.6321,  2.0000])
    """
    return _elu(input, inplace, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return _elu(input, True, alpha, 1.0, 1.0)


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with SELU's fixed ``alpha`` (1.6733) and ``scale`` (1.0507).

    >>> import ember
    >>> selu(ember.tensor([-1., 2.]))
    tensor([-1.1113,  2.1014])
    """
    return _elu(input, inplace, SELU_ALPHA, SELU_SCALE, 1.0)


def selu_(input):
    """In-place :func:`selu`."""
    return _elu(input, True, SELU_ALPHA, SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ELU, continuously differentiable in alpha.

    >>> import ember
    >>> celu(ember.tensor([-1., 2.]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, inplace, alpha, 1.0, 1.0 / alpha, op=CELU)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, True)


OPS = (ELU, ELU_BACKWARD, CELU, CELU_BACKWARD)
