"""The classical orthogonal polynomials of ``torch.special``: Chebyshev (four kinds,
and the shifted ones on [0, 1]), Hermite (physicists' ``H`` and probabilists' ``He``),
Laguerre and Legendre, ``P_n(x)`` for tensors ``x`` and ``n``.

PyTorch counterpart: aten/src/ATen/native/Math.h (``chebyshev_polynomial_t_forward``
and its neighbours) and the ``special_*_polynomial_*`` entries of
aten/src/ATen/native/native_functions.yaml (v2.13).

# NOTE [ Orthogonal polynomials by their recurrence ]
Each family obeys a three-term recurrence ``P_{k+1} = m_k(x) P_k - c_k P_{k-1}``
from ``P_0 = 1`` and a family's ``P_1``. The reference kernel runs it once for every
element up to the largest degree asked for, and keeps each element's value when ``k``
reaches its own ``n``. As in PyTorch, ``n`` is truncated to an integer and a negative
``n`` gives 0; PyTorch takes the Chebyshev polynomials of high degree inside (-1, 1)
from their trigonometric forms (``T_n(cos t) = cos(n t)``), the recurrence gives the
same values up to rounding. PyTorch gives these functions no gradient.
"""

from ember.dispatcher import INT_TO_FLOAT, Op
from ember.native.pointwise.unary import quiet


def _chebyshev(first):
    # P_{k+1} = 2x P_k - P_{k-1}: T, U, V, W differ only in P_1.
    return first, lambda x, k: (2 * x, 1.0)


RECURRENCES = {
    "chebyshev_polynomial_t": _chebyshev(lambda x: x),
    "chebyshev_polynomial_u": _chebyshev(lambda x: 2 * x),
    "chebyshev_polynomial_v": _chebyshev(lambda x: 2 * x - 1),
    "chebyshev_polynomial_w": _chebyshev(lambda x: 2 * x + 1),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda x, k: (2 * x, 2.0 * k)),
    "hermite_polynomial_he": (lambda x: x, lambda x, k: (x, float(k))),
    "laguerre_polynomial_l": (lambda x: 1 - x, lambda x, k: ((2 * k + 1 - x) / (k + 1), k / (k + 1))),
    "legendre_polynomial_p": (lambda x: x, lambda x, k: ((2 * k + 1) * x / (k + 1), k / (k + 1))),
}


def evaluate(xp, x, n, family):
    """``P_n(x)`` of ``family`` elementwise, by its recurrence
    (NOTE [ Orthogonal polynomials by their recurrence ])."""
    first, step = RECURRENCES[family]
    x, n = xp.broadcast_arrays(x, xp.trunc(xp.nan_to_num(n, nan=-1.0)).astype("int64"))
    result = xp.where(n < 0, 0.0, 1.0).astype(x.dtype)
    highest = int(n.max()) if n.size else 0
    if highest >= 1:
        previous, current = xp.ones_like(x), first(x)
        result = xp.where(n == 1, current, result)
        for k in range(1, highest):
            multiplier, back = step(x, k)
            previous, current = current, multiplier * current - back * previous
            result = xp.where(n == k + 1, current, result)
    return result.astype(x.dtype, copy=False)


def _shifted(family):
    # The shifted Chebyshev polynomials on [0, 1]: P*_n(x) = P_n(2x - 1).
    return lambda xp, x, n: evaluate(xp, 2 * x - 1, n, family)


def _polynomial_op(name, kernel):
    return Op(f"aten::special_{name}", quiet(kernel), None, promote=INT_TO_FLOAT, opmath=True)


OPS = {name: _polynomial_op(name, lambda xp, x, n, family=name: evaluate(xp, x, n, family)) for name in RECURRENCES}
OPS.update({f"shifted_{kind}": _polynomial_op(f"shifted_{kind}", _shifted(kind))
            for kind in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                         "chebyshev_polynomial_w")})


def _polynomial(name, formula):
    def function(input, n):
        if not hasattr(input, "_data") and not hasattr(n, "_data"):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__})")
        if not hasattr(input, "_data"):  # a number x: as a 0-d tensor, so the kernel sees an array
            from ember.native.factory import scalar_tensor

            input = scalar_tensor(input, dtype=n.dtype if n.dtype.is_floating_point else None, device=n.device)
        return OPS[name](input, n)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{formula}, elementwise for tensors (or numbers) ``input`` and ``n``."
    return function


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind T_n(x)")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind U_n(x)")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind V_n(x)")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind W_n(x)")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "W_n(2x - 1)")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "The physicists' Hermite polynomial H_n(x)")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "The probabilists' Hermite polynomial He_n(x)")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "The Laguerre polynomial L_n(x)")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "The Legendre polynomial P_n(x)")
