"""Reading and stepping a float's bits: ``frexp ldexp nextafter signbit``
(``copysign`` is in copysign.py).

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp (frexp, signbit),
BinaryOps.cpp (ldexp, nextafter) and their entries in tools/autograd/derivatives.yaml
(v2.13).

A float is ``mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1``: ``frexp`` splits
it, ``ldexp`` puts it together (as PyTorch, by ``input * 2.0 ** other``), ``nextafter``
steps to the neighbouring representable float, ``signbit`` reads the sign bit (so
-0.0 counts as negative).
"""

import collections

from ember.dispatcher import DEFAULT, NONE, Op
from ember.native.pointwise.binary import _elementwise, require_tensors
from ember.native.pointwise.unary import not_implemented_for, quiet

# --- frexp, ldexp ---------------------------------------------------------------------------

return_types_frexp = collections.namedtuple("frexp", ["mantissa", "exponent"])


def _frexp_kernel(xp, a):
    mantissa, exponent = xp.frexp(a)
    return mantissa, exponent.astype("int32", copy=False)


def _frexp_backward(ctx, grad_mantissa, grad_exponent):
    from ember.native.pointwise.unary import exp2

    _, exponent = ctx.saved_outputs
    return (grad_mantissa / exp2(exponent),)


FREXP = Op("aten::frexp", _frexp_kernel, _frexp_backward, promote=NONE, save="outputs", num_outputs=2)


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``0.5 <=
    |mantissa| < 1`` (both 0 for 0); the exponent is int32.

    >>> import ember
    >>> ember.frexp(ember.tensor([8.0, -0.75])).exponent
    tensor([4, 0], dtype=ember.int32)
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return return_types_frexp(*FREXP(input))


def ldexp(input, other):
    """``input * 2**other``, in the default float dtype for integer inputs.

    >>> import ember
    >>> ember.ldexp(ember.tensor([1.0, 0.5]), ember.tensor([3, -1]))
    tensor([8.0000, 0.2500])
    """
    from ember.native.pointwise.binary import mul
    from ember.native.pointwise.binary_functions import pow

    return mul(input, pow(2.0, other))


# --- nextafter, signbit ---------------------------------------------------------------------


def _nextafter_kernel(xp, a, b):
    if a.dtype.kind in "biu":
        raise not_implemented_for("nextafter_cpu", a.dtype)
    return _elementwise("nextafter")(xp, a, b)


def _nextafter_backward(ctx, grad):
    # PyTorch's formula treats the step as the identity in ``input`` and constant in ``other``.
    return grad, grad * 0.0


NEXTAFTER = Op("aten::nextafter", quiet(_nextafter_kernel), _nextafter_backward, promote=DEFAULT)


def nextafter(input, other):
    """The next float after ``input`` in the direction of ``other``.

    >>> import ember
    >>> ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])) - 1
    tensor([1.1921e-07])
    """
    require_tensors("nextafter", input, other)
    return NEXTAFTER(input, other)


def _signbit_kernel(xp, a):
    if a.dtype.kind == "b":
        return xp.zeros(a.shape, dtype=bool)
    return xp.signbit(a) if a.dtype.kind == "f" else a < 0


SIGNBIT = Op("aten::signbit", _signbit_kernel, None, promote=NONE)


def signbit(input):
    """Whether each element's sign bit is set (True for -0.0 and negative NaN).

    >>> import ember
    >>> ember.signbit(ember.tensor([-1.0, 0.0, -0.0, 2.0]))
    tensor([ True, False,  True, False])
    """
    return SIGNBIT(input)
