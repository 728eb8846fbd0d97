"""``example::softclamp``: a smooth clamp, defined with ``ember.library``.

PyTorch counterpart: a ``torch.library.custom_op`` with ``register_kernel`` and
``register_autograd`` (torch/library.py, v2.13).

    softclamp(x, limit) = limit * tanh(x / limit)
    d softclamp / dx    = 1 - tanh(x / limit) ** 2
"""

import numpy as np

from ember import library


@library.custom_op("example::softclamp", promote="int_to_float", save="inputs")
def softclamp(xp, x, *, limit=1.0):
    """Clamp ``x`` smoothly into ``(-limit, limit)``: ``limit * tanh(x / limit)``.

    Args:
        x: a tensor; integer inputs are computed in the default float dtype.
        limit: a positive float, the bound approached for large ``|x|``.

    Returns:
        A tensor of the same shape and (floating) dtype as ``x``.

    >>> import ember
    >>> ember.ops.example.softclamp(ember.tensor([0.0, 100.0]), limit=2.0)
    tensor([0., 2.])
    """
    return limit * xp.tanh(x / limit)


@library.register_kernel(softclamp, "cpu")
def softclamp_cpu(xp, x, *, limit=1.0):
    """The cpu kernel: NumPy's ``out=`` arguments reuse one buffer (CuPy would too,
    but this shows a device-specific kernel replacing the generic one)."""
    # an array even for 0-d x, where np.divide would return a scalar
    out = np.empty_like(x)
    np.divide(x, limit, out=out)
    np.tanh(out, out=out)
    np.multiply(out, limit, out=out)
    return out


def softclamp_backward(ctx, grad):
    """``grad * (1 - tanh(x / limit) ** 2)``, in ember ops so it is differentiable
    again."""
    (x,) = ctx.saved_inputs
    limit = ctx.attrs.get("limit", 1.0)
    return (grad * (1 - (x / limit).tanh() ** 2),)


library.register_autograd(softclamp, softclamp_backward)
