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
    if op.qualname in ALPHA_OPS and attrs.get("alpha", 1) != 1 and any(a.__class__ is np.ndarray for a in arrays):
        kernel = _alpha_in_two_loops(kernel, arrays, target)
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
    if not op.opmath:  # every bfloat16 op that is not opmath; float16 add and sub with alpha
        return kernel, kernel, _rounded_scalars(cast, target), _rounded_alpha(attrs, target)
    return kernel, kernel, cast, attrs


def _rounded_scalars(arrays, target):
    """An op that is not opmath takes a Python float operand rounded to its reduced
    type first, as PyTorch converts it to the common dtype (x + 0.1 adds
    bfloat16(0.1)); an opmath op (mul, div, ...) keeps it in float32 (NOTE [ bfloat16 ]
    in dtypes.py)."""
    for i, a in enumerate(arrays):
        if a.__class__ is float:
            arrays[i] = round_to(a, target)
    return arrays


def _rounded_alpha(attrs, target):
    # Scalar::to<scalar_t>: alpha in the reduced type (an int alpha too, where it has no
    # exact value there: bfloat16 has 8 bits)
    alpha = attrs.get("alpha")
    if alpha.__class__ in (float, int) and round_to(alpha, target) != alpha:
        return {**attrs, "alpha": round_to(alpha, target)}
    return attrs


# NOTE [ alpha in the two loops ]
# add and sub scale their second operand by alpha, which PyTorch converts to the
# reduced type (Scalar::to<scalar_t>). Its vector function is one fused multiply-add
# in float32, rounded once to the reduced type; its scalar function computes
# ``self + alpha * other`` in c10::BFloat16 / c10::Half arithmetic, which rounds the
# product to the reduced type before the sum. (A product of two bfloat16 or float16
# values is exact in float32, so fused or not, the vector function rounds once.) Which
# function computes an element depends on its place in the row TensorIterator walks:
# NOTE [ Vectorized and scalar loops ] in native/support/cpu_loops.py. Every tensor of
# fewer than 32 elements, and the last ``n % 32`` of a contiguous one, take the scalar
# function, so ``sub(x, 2.5, alpha=0.3)`` is a step apart there from the fused result.
ALPHA_OPS = frozenset(("aten::add", "aten::sub"))


def _alpha_in_two_loops(kernel, arrays, target):
    """``kernel`` (add or sub, ``a <op> alpha * b`` on OPMATH arrays) computing each
    element as PyTorch's loop for it does: NOTE [ alpha in the two loops ]. ``arrays``:
    the operands as the op received them, whose layout decides the loops."""
    from ember.native.support.cpu_loops import scalar_loop_mask

    layouts = []
    for a in arrays:  # (shape, element strides); a Python number is a 0-d operand
        if a.__class__ is np.ndarray:
            layouts.append((a.shape, tuple(s // a.itemsize for s in a.strides)))
        else:
            layouts.append(((), ()))
    shape = np.broadcast_shapes(*(shape for shape, _ in layouts))
    scalar = scalar_loop_mask(shape, layouts, target.itemsize)

    def run(a, b, alpha=1):
        fused = kernel(a, b, alpha=alpha)  # the vector loop: rounded once
        if not scalar.any():
            return fused
        product = b * alpha  # the scalar loop: alpha * b rounded first
        if product.__class__ is float:
            product = round_to(product, target)
        else:
            product = product.astype(target).astype(OPMATH)
        return np.where(scalar, kernel(a, product), fused)
    return run


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
    return round_to(value, BFLOAT16_NP)


def round_to(value, reduced):
    """A Python number rounded to the nearest value of the NumPy dtype ``reduced``
    (ties to even), as a Python float; through float32 first, as c10 converts a double."""
    return float(np.float32(value).astype(reduced))


def _round_to(array, reduced):
    return array.astype(reduced) if array.dtype == OPMATH else array
