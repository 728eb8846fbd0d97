"""``copysign``: the magnitude of ``input`` with the sign of ``other``.

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (``copysign``) and its
derivatives.yaml entry (v2.13).

Integers and bools become the default float type. The gradient for ``input`` is
``grad * result / input`` (+1 or -1), zero where ``input`` is zero; ``other`` gets
none (zero), as in PyTorch.
"""

from ember.autograd.forward_grad import AUTO_ELEMENT_WISE
from ember.dispatcher import INT_TO_FLOAT, Op
from ember.native.pointwise.binary import _elementwise


def _copysign_backward(ctx, grad):
    (a, _) = ctx.saved_inputs
    (result,) = ctx.saved_outputs
    need_a, need_b = ctx.needs_input_grad
    grad_a = None
    if need_a:
        ratio = (result / a).masked_fill(a == 0, 0.0)
        grad_a = grad * ratio
    return grad_a, (grad * 0.0 if need_b else None)


COPYSIGN = Op("aten::copysign", _elementwise("copysign"), _copysign_backward, promote=INT_TO_FLOAT, save="both",
              elementwise=True, jvp=AUTO_ELEMENT_WISE)


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (also of a zero: -0.0 counts as negative).

    >>> import ember
    >>> ember.copysign(ember.tensor([1., -2., 3.]), ember.tensor([-1., 1., -0.]))
    tensor([-1.,  2., -3.])
    """
    if not hasattr(input, "_data"):
        raise TypeError(f"copysign(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return COPYSIGN(input, other)
