"""Number theory on integer tensors: ``gcd`` and ``lcm``.

PyTorch counterpart: aten/src/ATen/native/BinaryOps.cpp (gcd, lcm) and their kernels
(v2.13).

Integer dtypes only (PyTorch has no float or bool kernel); both results are
non-negative, and ``gcd(0, 0) = lcm(0, x) = 0``. Integers have no gradient.
"""

from ember.dispatcher import DEFAULT, Op
from ember.native.pointwise.binary import _reraise, require_tensors
from ember.native.pointwise.unary import not_implemented_for


def _integer_kernel(ufunc):
    def kernel(xp, a, b):
        if a.dtype.kind not in "iu":
            raise not_implemented_for(f"{ufunc}_cpu", a.dtype)
        try:
            return getattr(xp, ufunc)(a, b)
        except ValueError as error:
            _reraise(error, a, b)
    return kernel


GCD = Op("aten::gcd", _integer_kernel("gcd"), None, promote=DEFAULT)
LCM = Op("aten::lcm", _integer_kernel("lcm"), None, promote=DEFAULT)


def gcd(input, other):
    """The greatest common divisor of each pair of elements.

    >>> import ember
    >>> ember.gcd(ember.tensor([12, -9, 0]), ember.tensor([18, 6, 0]))
    tensor([6, 3, 0])
    """
    require_tensors("gcd", input, other)
    return GCD(input, other)


def lcm(input, other):
    """The least common multiple of each pair of elements.

    >>> import ember
    >>> ember.lcm(ember.tensor([4, -6, 0]), ember.tensor([6, 4, 5]))
    tensor([12, 12,  0])
    """
    require_tensors("lcm", input, other)
    return LCM(input, other)
