"""Elementwise unary math: ``neg abs sign exp log sqrt sin tanh sigmoid erf ...``.

PyTorch counterpart: aten/src/ATen/native/UnaryOps.cpp and the unary entries of
tools/autograd/derivatives.yaml (v2.13).

Each op is one ``Op`` whose kernel is a single NumPy/CuPy ufunc call. Ops that are
"floating" in PyTorch (exp, sin, ...) turn integer and bool inputs into the default
float dtype first; ``neg``, ``abs``, ``sign`` and the rounding ops keep the dtype.
"""

import functools
import math

from ember import dtypes
from ember.autograd.forward_grad import AUTO_ELEMENT_WISE, AUTO_LINEAR
from ember.autograd.graph import complex_formula
from ember.dispatcher import DEFAULT, INT_TO_FLOAT, NONE, Op
from ember.dtypes import BFLOAT16_NP, finfo_of, is_floating_array

# NOTE [ Floating-point warnings ]
# NumPy reports log(0), 0/0, sqrt(-1), overflow and inf - inf as RuntimeWarnings;
# PyTorch returns -inf, nan or inf silently, and so does ember. Kernels that meet such
# values in ordinary use run with NumPy's floating-point error handling set to
# "ignore" through ``quiet``. `np.errstate` costs about 2.5 us per use (it builds a new
# state object every time), so ``quiet`` sets NumPy's error-state context variable to a
# prepared "ignore" state directly, and falls back to errstate where NumPy lacks that
# variable. add, sub and mul (the hot path, which can only warn on overflow or
# inf - inf) go without it. CuPy has no such warnings.


def _numpy_error_state():
    """(context variable, prepared 'ignore' value) of NumPy's error state, or None."""
    try:
        import numpy
        from numpy._core import _ufunc_config
    except ImportError:
        return None
    var = getattr(_ufunc_config, "_extobj_contextvar", None)
    if var is None:
        return None
    with numpy.errstate(all="ignore"):
        return var, var.get()


_ERROR_STATE = _numpy_error_state()


def call_quietly(xp, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with NumPy's floating-point warnings silenced."""
    if _ERROR_STATE is not None and xp.__name__ == "numpy":
        var, ignore = _ERROR_STATE
        token = var.set(ignore)
        try:
            return fn(*args, **kwargs)
        finally:
            var.reset(token)
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        return fn(*args, **kwargs)
    with errstate(all="ignore"):
        return fn(*args, **kwargs)


def quiet(kernel):
    """Wrap a generic kernel so that NumPy's floating-point warnings stay silent."""
    @functools.wraps(kernel)
    def run(xp, *arrays, **attrs):
        return call_quietly(xp, kernel, xp, *arrays, **attrs)
    return run


def not_implemented_for(kernel_name, dtype):
    """PyTorch's error for a kernel that has no version for ``dtype`` (a NumPy dtype)."""
    from ember.native.support._inplace import _type_name

    return NotImplementedError(f"\"{kernel_name}\" not implemented for '{_type_name(dtype)}'")


def _unary(name, kernel, backward, promote=INT_TO_FLOAT, save="inputs"):
    # opmath: a kernel of several NumPy calls (sigmoid, gelu) would round float16 at each
    # step; PyTorch computes it in float32 and rounds once (NOTE [ opmath ] in opmath.py).
    # jvp: one input, elementwise, so the backward formula applied to the tangent is the
    # forward derivative (NOTE [ Forward grads at the dispatcher ])
    return Op(f"aten::{name}", quiet(kernel), backward, promote=promote, save=save, opmath=True,
              elementwise=True, jvp=AUTO_ELEMENT_WISE)


def _x(ctx):
    return ctx.saved_inputs[0]


def _y(ctx):
    return ctx.saved_outputs[0]


# --- sign and magnitude ---------------------------------------------------------


def _neg_kernel(xp, a):
    if a.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return xp.negative(a)


def _abs_kernel(xp, a):
    if a.dtype.kind == "b":
        raise not_implemented_for("abs_cpu", a.dtype)
    return xp.abs(a)


def _sign_kernel(xp, a):
    if a.dtype.kind == "b":
        return a.copy()
    if a.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    if not is_floating_array(a.dtype):
        return xp.sign(a)
    # PyTorch's sign(nan) is 0 (NumPy's is nan); abs's gradient relies on it.
    return xp.where(xp.isnan(a), a.dtype.type(0), xp.sign(a))


def _sgn_kernel(xp, a):
    if a.dtype.kind != "c":
        return _sign_kernel(xp, a)
    # z / |z|, and 0 at 0 (PyTorch's sgn).
    magnitude = xp.abs(a)
    return xp.where(magnitude == 0, a.dtype.type(0), a / xp.where(magnitude == 0, 1, magnitude))


@complex_formula
def _abs_backward(ctx, g):
    # grad * sgn(z): for a complex z, d|z|/dx + i d|z|/dy = z / |z| (NOTE [ Complex gradients ]).
    return (g * sgn(_x(ctx)),)


@complex_formula
def _sgn_backward(ctx, g):
    x = _x(ctx)
    if not x.dtype.is_complex:
        return (g * 0,)
    # sgn(z) = z / |z|: the gradient is (g - Re(g * conj(sgn z)) sgn z) / |z|, 0 at 0.
    magnitude = abs(x)
    unit = _y(ctx)
    safe = magnitude + (magnitude == 0)
    return ((g - (g * unit.conj()).real * unit) / safe * (magnitude != 0),)


NEG = _unary("neg", _neg_kernel, lambda ctx, g: (-g,), promote=NONE, save=None)
ABS = _unary("abs", _abs_kernel, _abs_backward, promote=NONE)
SIGN = _unary("sign", _sign_kernel, lambda ctx, g: (g * 0,), promote=NONE, save=None)
SGN = _unary("sgn", _sgn_kernel, _sgn_backward, promote=NONE, save="both")


def _positive_kernel(xp, a):
    if a.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return a.view()


POSITIVE = Op("aten::positive", _positive_kernel, lambda ctx, g: (g,), promote=NONE, view=True, jvp=AUTO_LINEAR)


def positive(input):
    """``+input``: ``input`` itself (a view sharing its memory); an error for bool."""
    return POSITIVE(input)


def neg(input):
    """``-input``."""
    return NEG(input)


negative = neg


def abs(input):
    """``|input|``; the gradient at 0 is 0, as in PyTorch."""
    return ABS(input)


absolute = abs


def sign(input):
    """-1, 0 or 1 by the sign of each element."""
    return SIGN(input)


def sgn(input):
    """``sign`` for real tensors; ``z / |z|`` (0 at 0) for complex ones."""
    return SGN(input) if input.dtype.is_complex else SIGN(input)


RECIPROCAL = _unary("reciprocal", lambda xp, a: xp.reciprocal(a), lambda ctx, g: (-g * _y(ctx) * _y(ctx),),
                    save="outputs")


def reciprocal(input):
    """``1 / input``."""
    return RECIPROCAL(input)


# --- exponentials and logarithms ------------------------------------------------

EXP = _unary("exp", lambda xp, a: xp.exp(a), lambda ctx, g: (g * _y(ctx),), save="outputs")
EXP2 = _unary("exp2", lambda xp, a: xp.exp2(a), lambda ctx, g: (g * _y(ctx) * math.log(2.0),), save="outputs")
EXPM1 = _unary("expm1", lambda xp, a: xp.expm1(a), lambda ctx, g: (g * (_y(ctx) + 1),), save="outputs")
LOG = _unary("log", lambda xp, a: xp.log(a), lambda ctx, g: (g / _x(ctx),))
LOG2 = _unary("log2", lambda xp, a: xp.log2(a), lambda ctx, g: (g / (_x(ctx) * math.log(2.0)),))
LOG10 = _unary("log10", lambda xp, a: xp.log10(a), lambda ctx, g: (g / (_x(ctx) * math.log(10.0)),))
LOG1P = _unary("log1p", lambda xp, a: xp.log1p(a), lambda ctx, g: (g / (_x(ctx) + 1),))
SQRT = _unary("sqrt", lambda xp, a: xp.sqrt(a), lambda ctx, g: (g / (2 * _y(ctx)),), save="outputs")


def _rsqrt_kernel(xp, a):
    return xp.reciprocal(xp.sqrt(a))


RSQRT = _unary("rsqrt", _rsqrt_kernel, lambda ctx, g: (g * -0.5 * _y(ctx) ** 3,), save="outputs")


def exp(input):
    """``e ** input``."""
    return EXP(input)


def exp2(input):
    """``2 ** input``."""
    return EXP2(input)


def expm1(input):
    """``exp(input) - 1``, accurate near 0."""
    return EXPM1(input)


def log(input):
    """Natural logarithm."""
    return LOG(input)


def log2(input):
    """Base-2 logarithm."""
    return LOG2(input)


def log10(input):
    """Base-10 logarithm."""
    return LOG10(input)


def log1p(input):
    """``log(1 + input)``, accurate near 0."""
    return LOG1P(input)


def sqrt(input):
    """Square root; NaN for negative inputs."""
    return SQRT(input)


def rsqrt(input):
    """``1 / sqrt(input)``."""
    return RSQRT(input)


def square(input):
    """``input ** 2`` (bool becomes int64, as for ``pow(input, 2)``)."""
    from ember.native.pointwise.binary_functions import pow

    # pow, not input * input: square_ then saves one old value, as PyTorch's does.
    return pow(input, 2)


# --- trigonometric and hyperbolic -----------------------------------------------

SIN = _unary("sin", lambda xp, a: xp.sin(a), lambda ctx, g: (g * cos(_x(ctx)),))
COS = _unary("cos", lambda xp, a: xp.cos(a), lambda ctx, g: (-g * sin(_x(ctx)),))
TAN = _unary("tan", lambda xp, a: xp.tan(a), lambda ctx, g: (g * (1 + _y(ctx) * _y(ctx)),), save="outputs")
ASIN = _unary("asin", lambda xp, a: xp.arcsin(a), lambda ctx, g: (g * rsqrt(1 - _x(ctx) * _x(ctx)),))
ACOS = _unary("acos", lambda xp, a: xp.arccos(a), lambda ctx, g: (-g * rsqrt(1 - _x(ctx) * _x(ctx)),))
ATAN = _unary("atan", lambda xp, a: xp.arctan(a), lambda ctx, g: (g / (1 + _x(ctx) * _x(ctx)),))
SINH = _unary("sinh", lambda xp, a: xp.sinh(a), lambda ctx, g: (g * cosh(_x(ctx)),))
COSH = _unary("cosh", lambda xp, a: xp.cosh(a), lambda ctx, g: (g * sinh(_x(ctx)),))
TANH = _unary("tanh", lambda xp, a: xp.tanh(a), lambda ctx, g: (g * (1 - _y(ctx) * _y(ctx)),), save="outputs")


def sin(input):
    """Sine (radians)."""
    return SIN(input)


def cos(input):
    """Cosine (radians)."""
    return COS(input)


def tan(input):
    """Tangent (radians)."""
    return TAN(input)


def asin(input):
    """Arcsine on [-1, 1]; NaN outside."""
    return ASIN(input)


def acos(input):
    """Arccosine on [-1, 1]; NaN outside."""
    return ACOS(input)


def atan(input):
    """Arctangent."""
    return ATAN(input)


arcsin, arccos, arctan = asin, acos, atan


def sinh(input):
    """Hyperbolic sine."""
    return SINH(input)


def cosh(input):
    """Hyperbolic cosine."""
    return COSH(input)


def tanh(input):
    """Hyperbolic tangent; backward uses the output: ``1 - tanh(x)**2``."""
    return TANH(input)


# --- sigmoid, erf ---------------------------------------------------------------


def _sigmoid_kernel(xp, a):
    if a.dtype.kind == "c":
        return 1 / (1 + xp.exp(-a))
    # exp of a negative number only: no overflow warning for large |a|.
    e = xp.exp(-xp.abs(a))
    return xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)


SIGMOID = _unary("sigmoid", _sigmoid_kernel, lambda ctx, g: (g * _y(ctx) * (1 - _y(ctx)),), save="outputs")


def sigmoid(input):
    """``1 / (1 + exp(-input))``, computed without overflow."""
    return SIGMOID(input)


def _erf_kernel(xp, a):
    return _special(xp).erf(a).astype(a.dtype, copy=False)


def _erfinv_kernel(xp, a):
    return _special(xp).erfinv(a).astype(a.dtype, copy=False)


def _special(xp):
    # scipy.special for NumPy, cupyx.scipy.special for CuPy.
    if xp.__name__ == "cupy":
        import cupyx.scipy.special as special
    else:
        import scipy.special as special
    return special


ERF = _unary("erf", _erf_kernel, lambda ctx, g: (g * (2 / math.sqrt(math.pi)) * exp(-_x(ctx) * _x(ctx)),))
ERFC = _unary("erfc", lambda xp, a: _special(xp).erfc(a).astype(a.dtype, copy=False),
              lambda ctx, g: (g * (-2 / math.sqrt(math.pi)) * exp(-_x(ctx) * _x(ctx)),))
ERFINV = _unary("erfinv", _erfinv_kernel,
                lambda ctx, g: (g * (math.sqrt(math.pi) / 2) * exp(_y(ctx) * _y(ctx)),), save="outputs")


def erf(input):
    """The error function."""
    return ERF(input)


def erfc(input):
    """``1 - erf(input)``, accurate for large inputs."""
    return ERFC(input)


def erfinv(input):
    """The inverse error function on (-1, 1)."""
    return ERFINV(input)


# --- rounding -------------------------------------------------------------------


def _rounding(name, ufunc):
    def kernel(xp, a):
        if a.dtype.kind == "b":
            raise not_implemented_for(f"{name}_vml_cpu", a.dtype)
        return a.copy() if a.dtype.kind in "iu" else getattr(xp, ufunc)(a)
    return _unary(name, kernel, lambda ctx, g: (g * 0,), promote=NONE, save=None)


FLOOR = _rounding("floor", "floor")
CEIL = _rounding("ceil", "ceil")
TRUNC = _rounding("trunc", "trunc")


def _round_kernel(xp, a, decimals=0):
    if a.dtype.kind == "b" or a.dtype.kind in "iu" and decimals != 0:
        raise not_implemented_for("round_cpu" if decimals else "round_vml_cpu", a.dtype)
    if a.dtype.kind in "iu":
        return a.copy()
    return xp.round(a, decimals)  # round half to even, as PyTorch


ROUND = Op("aten::round", quiet(_round_kernel), lambda ctx, g: (g * 0,), elementwise="tensors", promote=NONE,
           jvp=AUTO_ELEMENT_WISE)


def floor(input):
    """Largest integer not above each element (integer tensors are returned as they are)."""
    return FLOOR(input)


def ceil(input):
    """Smallest integer not below each element."""
    return CEIL(input)


def trunc(input):
    """Round toward zero."""
    return TRUNC(input)


fix = trunc


def round(input, *, decimals=None):
    """Round half to even, like PyTorch. An integer input is returned as it is, unless
    ``decimals`` is given (even 0): PyTorch's ``round.decimals`` has no integer kernel."""
    if decimals is not None and not input.dtype.is_floating_point:
        raise not_implemented_for("round_vml_cpu" if decimals == 0 else "round_cpu", input._data.dtype)
    return ROUND(input) if not decimals else ROUND(input, decimals=decimals)


def _frac_kernel(xp, a):
    if not is_floating_array(a.dtype):
        raise not_implemented_for("frac_cpu", a.dtype)
    return a - xp.trunc(a)


FRAC = _unary("frac", _frac_kernel, lambda ctx, g: (g,), promote=NONE, save=None)


def frac(input):
    """``input - trunc(input)``, for floating inputs only."""
    return FRAC(input)


# --- clamp and nan_to_num -------------------------------------------------------


def _clamp_kernel(xp, a, lo, hi):
    out = a
    if lo is not None:
        out = xp.maximum(out, lo)
    if hi is not None:
        out = xp.minimum(out, hi)
    return a.copy() if out is a else out


def _clamp_backward(ctx, grad):
    from ember.native.indexing.indexing import where

    x, lo, hi = ctx.saved_inputs
    need_x, need_lo, need_hi = ctx.needs_input_grad
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        upper = x <= hi
        inside = upper if inside is None else inside & upper
    grad_x = where(inside, grad, 0.0) if need_x else None
    grad_lo = grad_hi = None
    # With min > max (or min == max) the output is max everywhere: max takes the gradient.
    if need_lo:
        below = x < lo
        grad_lo = where(below if hi is None else below & (lo < hi), grad, 0.0)
    if need_hi:
        above = x > hi
        grad_hi = where(above if lo is None else above | (hi < lo), grad, 0.0)
    return grad_x, grad_lo, grad_hi


CLAMP = Op("aten::clamp", _clamp_kernel, _clamp_backward, elementwise="tensors", promote=DEFAULT, save="inputs",
           jvp=AUTO_ELEMENT_WISE)


def _check_bounds_alike(min, max):
    # PyTorch's overloads take two tensor bounds or two number bounds, never one of each.
    from ember.tensor import Tensor

    if isinstance(min, Tensor) != isinstance(max, Tensor):
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, "
                        f"min={type(min).__name__}, max={type(max).__name__}), but expected both bounds "
                        "Tensors or both Numbers")


def clamp(input, min=None, max=None):
    """Limit ``input`` to ``[min, max]``; the bounds are numbers or tensors (both of a kind)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = dtypes.python_number(min), dtypes.python_number(max)  # NOTE in dtypes.py
    if min is not None and max is not None:
        _check_bounds_alike(min, max)
    for bound in (min, max):
        if bound.__class__ is int:
            dtypes.checked_int(bound, input._data.dtype)  # PyTorch's overflow check for the bounds
    if input._data.dtype.kind == "b" and all(b is None or b.__class__ is bool for b in (min, max)):
        # bool clamped by bool scalars stays bool, for which PyTorch has no kernel
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            ("clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
        raise not_implemented_for(kernel, input._data.dtype)
    return CLAMP(input, min, max)


clip = clamp


def clamp_min(input, min):
    """``clamp(input, min=min)``."""
    return CLAMP(input, min, None)


def clamp_max(input, max):
    """``clamp(input, max=max)``."""
    return CLAMP(input, None, max)


def _nan_to_num_kernel(xp, a, nan=0.0, posinf=None, neginf=None):
    if not is_floating_array(a.dtype):
        return a.copy()
    return xp.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_backward(ctx, grad):
    from ember.native.indexing.indexing import where

    (x,) = ctx.saved_inputs
    return (where(x.isfinite(), grad, 0.0),)


NAN_TO_NUM = Op("aten::nan_to_num", _nan_to_num_kernel, _nan_to_num_backward, save="inputs", jvp=AUTO_ELEMENT_WISE)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace NaN, +inf and -inf (by default with 0 and the dtype's extremes;
    ``nan=None`` is 0 too, as in PyTorch)."""
    if input._data.dtype == BFLOAT16_NP:
        # bfloat16 computes in float32 (NOTE [ opmath ]), whose largest value rounds
        # to inf in bfloat16: the extremes are bfloat16's own
        biggest = float(finfo_of(BFLOAT16_NP).max)
        posinf = biggest if posinf is None else posinf
        neginf = -biggest if neginf is None else neginf
    return NAN_TO_NUM(input, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


# --- relu -----------------------------------------------------------------------


def _relu_kernel(xp, a):
    if a.dtype.kind == "b":
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")
    return xp.maximum(a, 0)


def _threshold_backward_kernel(xp, grad, output, threshold=0):
    # "not <=" rather than ">": a NaN output passes its gradient through, as in PyTorch.
    return zero_where_not(xp, grad, xp.logical_not(output <= threshold))


_SAME_WIDTH_INT = {2: "int16", 4: "int32", 8: "int64"}


def zero_where_not(xp, values, keep):
    """``where(keep, values, 0)`` for floating ``values``, exactly (inf and NaN where
    ``keep`` is false become 0, as in PyTorch's threshold_backward).

    Computed as a bitwise AND of the float bits with an all-ones/all-zeros mask:
    ``xp.where`` with an unpredictable mask is about 10x slower on the CPU (a branch
    per element), and ``values * keep`` would turn a masked inf into NaN."""
    if not is_floating_array(values.dtype) or values.shape != keep.shape:
        return xp.where(keep, values, 0).astype(values.dtype, copy=False)
    ints = _SAME_WIDTH_INT[values.itemsize]
    mask = xp.negative(keep, dtype=ints)  # True -> -1 (all bits set), False -> 0
    # A same-size view needs no contiguity, so the result keeps ``values``' layout
    # (a channels_last gradient stays channels_last, as TensorIterator's output does).
    return xp.bitwise_and(values.view(ints), mask).view(values.dtype)


def _threshold_backward_backward(ctx, grad):
    _, output = ctx.saved_inputs
    # The mask does not vary with the output: its gradient is zero (not None), as in PyTorch.
    from ember.native.factory import zeros_like

    return THRESHOLD_BACKWARD(grad, output, threshold=ctx.attrs.get("threshold", 0)), zeros_like(output)


THRESHOLD_BACKWARD = Op("aten::threshold_backward", _threshold_backward_kernel, _threshold_backward_backward,
                        elementwise="tensors", promote=NONE, save="inputs", jvp=AUTO_ELEMENT_WISE)


def _relu_backward(ctx, grad):
    # One fused op, as PyTorch's threshold_backward: grad where the output is positive.
    return (THRESHOLD_BACKWARD(grad, _y(ctx)),)


RELU = _unary("relu", _relu_kernel, _relu_backward, promote=NONE, save="outputs")


def relu(input):
    """``max(input, 0)``; the gradient is 0 where the output is 0 (as in PyTorch)."""
    return RELU(input)
