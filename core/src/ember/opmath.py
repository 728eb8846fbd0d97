"""float16 and bfloat16 computed in float32: the dispatcher's promotion step for the
reduced floats, and the kernel wrapper that rounds the result once.

PyTorch counterpart: aten/src/ATen/OpMathType.h (``at::opmath_type``) and the
conversions TensorIterator's CPU loops make around a kernel in a reduced type (v2.13).
See NOTE [ opmath ]; bfloat16 itself is NOTE [ bfloat16 ] in dtypes.py.
"""

import numpy as np

from ember.dtypes import BFLOAT16_NP, OPMATH, REDUCED_FLOATS, fit_int

Tensor = None  # bound by ember.tensor on import, as in dispatcher.py

# ``Op(..., opmath=UNROUNDED)``: computed in OPMATH and returned in OPMATH, not rounded.
UNROUNDED = "unrounded"

# NOTE [ opmath ]
# PyTorch computes on float16 and bfloat16 in float32, its "opmath" type
# (at::opmath_type), and rounds the result to the reduced type once: reductions
# accumulate in float32 (float16 [6e4, 6e4].mean() is 6e4, not inf), softmax runs in
# float32, and mul/div/lerp/addcmul keep a Python float scalar in float32 (half * 0.1
# multiplies by float32(0.1), not by half(0.1)). add and sub do not: PyTorch rounds
# their scalar to the tensor's dtype first, as NumPy does. Unary ops are opmath too:
# NumPy's float16 loops compute one call in float32, but a kernel of several calls
# (sigmoid, gelu) would round between them.
# In ember an op declares ``opmath=True``; when its computation dtype is a reduced
# float (for an op that does not promote, its first tensor's dtype: the norms, pooling,
# matmul), the dispatcher casts the inputs to OPMATH and runs the kernel through
# ``in_opmath``, which rounds the floating outputs back. A fused PyTorch kernel that
# ember splits in two ops (layer norm's statistics, then the normalization) rounds
# once at the very end: the first op declares ``opmath=UNROUNDED`` and hands its
# statistics on in OPMATH, and the second, an opmath op, rounds. bfloat16 goes this way in
# every op but the views, opmath or not (NumPy cannot compute in it). float32 and
# float64 never reach this code (the dispatcher's fast path). The casts below are
# loops, not comprehensions: in Python 3.11 a comprehension is a frame of its own, and
# they run on every reduced-float op.


def promote(op, kernel, inputs, arrays, attrs, target):
    """``(call, kernel, arrays, attrs)`` for an op whose computation dtype ``target`` is
    a reduced float: the arrays in OPMATH and the kernel wrapped by ``in_opmath``.
    A tensor of another dtype (a 0-d float32 one, an integer one) is converted to
    ``target`` first, as TensorIterator converts every operand to the common dtype;
    only the second operand of an opmath op (mul, div), when 0-d, is read unrounded,
    as PyTorch's kernels read a CPU scalar's original value
    (``original_scalar_value<opmath_t>``). Python numbers: ``_scalars_of``."""
    kernel = in_opmath(kernel, target, op.opmath is not UNROUNDED)
    cast = []
    position = 0
    for x, a in zip(inputs, arrays):
        if isinstance(x, Tensor):
            if a.dtype != target and not (op.opmath and position == 1 and a.ndim == 0):
                a = a.astype(target)
            if a.dtype != OPMATH:
                a = a.astype(OPMATH)
        elif a.__class__ is int and target is not BFLOAT16_NP:
            a = fit_int(a, OPMATH)
        cast.append(a)
        position += 1
    if target is BFLOAT16_NP and not op.opmath:
        return kernel, kernel, _rounded_scalars(cast), _rounded_alpha(attrs)
    return kernel, kernel, cast, attrs


def _rounded_scalars(arrays):
    """A bfloat16 op that is not opmath takes a Python float operand rounded to
    bfloat16 first, as PyTorch converts it to the common dtype (x + 0.1 adds
    bfloat16(0.1)); an opmath op (mul, div, ...) keeps it in float32 (NOTE [ bfloat16 ]
    in dtypes.py). NumPy's float16 loops round it themselves."""
    for i, a in enumerate(arrays):
        if a.__class__ is float:
            arrays[i] = round_to_bfloat16(a)
    return arrays


def _rounded_alpha(attrs):
    alpha = attrs.get("alpha")
    if alpha.__class__ is float:
        return {**attrs, "alpha": round_to_bfloat16(alpha)}
    return attrs


def unpromoted(op, kernel, arrays, array_type, reduced):
    """``(call, kernel, arrays)`` for an op that does not promote (matmul, conv, the
    norms, pooling) on ``reduced`` arrays: every bfloat16 op and the float16 opmath
    ops. Its arrays of that type in OPMATH, the kernel wrapped by ``in_opmath``."""
    kernel = in_opmath(kernel, reduced, op.opmath is not UNROUNDED)
    cast = []
    for a in arrays:
        if a.__class__ is array_type and a.dtype is reduced:
            a = a.astype(OPMATH)
        cast.append(a)
    return kernel, kernel, cast


def in_opmath(kernel, reduced, rounds=True):
    """``kernel`` run in OPMATH, its floating outputs rounded once to ``reduced`` (a
    ``dtype=`` attribute naming the reduced type, e.g. ``sum(dtype=float16)``,
    accumulates in OPMATH too); left in OPMATH when not ``rounds``."""
    def run(*arrays, **attrs):
        asked = attrs.get("dtype")
        if asked is not None and asked != reduced:
            return kernel(*arrays, **attrs)  # sum(half, dtype=float32): the asked type, unrounded
        if asked is not None:
            attrs["dtype"] = OPMATH
        out = kernel(*arrays, **attrs)
        if not rounds:
            return out
        if isinstance(out, tuple):
            return tuple(_round_to(o, reduced) for o in out)
        return _round_to(out, reduced)
    return run


def is_reduced(dtype):
    """Whether an ember dtype is float16 or bfloat16. A composite of several ops that
    PyTorch computes as one kernel (scaled_dot_product_attention, interpolate) runs on
    such inputs cast to float32 and rounds its result once, ``.to(dtype)``."""
    return dtype.np in REDUCED_FLOATS


def round_to_bfloat16(value):
    """A Python float rounded to the nearest bfloat16 (ties to even), as a Python float.
    Through float32 first, as c10::BFloat16 converts a double."""
    return float(np.float32(value).astype(BFLOAT16_NP))


def _round_to(array, reduced):
    return array.astype(reduced) if array.dtype == OPMATH else array
