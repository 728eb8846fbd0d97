"""Defining operators from outside the core: schema, kernels per device, backward.

PyTorch counterpart: torch/library.py (``custom_op``, ``register_kernel``,
``register_autograd``) (v2.13).

    from ember import library

    @library.custom_op("mylib::softclamp", promote="int_to_float", save="inputs")
    def softclamp(xp, x, limit=1.0):
        return limit * xp.tanh(x / limit)

    @softclamp.register_backward
    def _(ctx, grad):
        (x,) = ctx.saved_inputs
        limit = ctx.attrs.get("limit", 1.0)
        return (grad * (1 - (x / limit).tanh() ** 2),)

The op is an ``ember.dispatcher.Op``: call it with tensors positionally and
non-tensor arguments by keyword, ``softclamp(x, limit=2.0)``. A plugin registers it in
its ``ember_register_ops`` hook; it is then also ``ember.ops.mylib.softclamp``.
"""

from ember.dispatcher import COMPARE, DEFAULT, INT_TO_FLOAT, NONE, Op

PROMOTIONS = {"none": NONE, "default": DEFAULT, "int_to_float": INT_TO_FLOAT, "compare": COMPARE}


def custom_op(qualname, *, promote="none", save=None, num_outputs=1, backward=None):
    """Decorator: turn ``kernel(xp, *arrays, **attrs)`` into an op named ``qualname``.

    Args:
        qualname: ``"namespace::name"``; the namespace must not be ``aten``.
        promote: how inputs are type-promoted first: ``"none"``, ``"default"``,
            ``"int_to_float"`` or ``"compare"``.
        save: what backward reads: ``"inputs"``, ``"outputs"``, ``"both"`` or None.
        num_outputs: how many arrays the kernel returns.
        backward: the formula ``fn(ctx, *grads)``, or set it later with ``@op.register_backward``.
    """
    if qualname.startswith("aten::"):
        raise ValueError("the 'aten' namespace is reserved for ember's built-in operators")
    if promote not in PROMOTIONS:
        raise ValueError(f"promote must be one of {sorted(PROMOTIONS)}, got {promote!r}")

    def define(kernel):
        op = Op(qualname, kernel, backward, promote=PROMOTIONS[promote], save=save, num_outputs=num_outputs,
                plugin=None)
        op.doc = kernel.__doc__
        return op
    return define


def register_kernel(op, device_type):
    """Decorator: a kernel for ``op`` on one device type, replacing the generic one there."""
    return op.register_kernel(device_type)


def register_autograd(op, backward):
    """Set ``op``'s backward formula."""
    op.register_backward(backward)
    return op
