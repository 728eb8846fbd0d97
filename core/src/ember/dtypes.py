"""Scalar types and PyTorch's type-promotion rules.

PyTorch counterpart: c10/core/ScalarType.h (the dtypes and ``promoteTypes``) and
torch/_prims_common/__init__.py (``elementwise_dtypes``: how Python scalars and 0-d
tensors take part in promotion) (v2.13).

An ``ember.dtype`` is a small immutable record around the NumPy dtype that backends
store. complex64 and complex128 are NumPy's (NOTE [ Complex dtypes ]). uint16, uint32,
uint64 and the float8 types are kept, converted and saved but not computed in (NOTE
[ Barebones dtypes ]). Left out: complex32 and the quantized types (ember_quantization).

bfloat16 is ``ml_dtypes.bfloat16`` (NOTE [ bfloat16 ]).
"""

import math

import ml_dtypes
import numpy as np

# NOTE [ Type promotion categories ]
# PyTorch orders dtypes by *category*: bool < integer < floating. When operands of
# different priority meet (dimensioned tensors > 0-d tensors > Python scalars) the
# higher-priority operands fix the dtype, unless a lower-priority operand is of a
# higher category: then that category wins. So int32 tensor + 2.5 -> default float
# (float32), float16 tensor + 2.5 -> float16, int8 tensor + 1000 -> int8.
BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, such as ``ember.float32``."""

    __slots__ = ("name", "np", "itemsize", "category", "is_floating_point", "is_signed")

    def __init__(self, name, np_dtype, category, is_signed):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_floating_point = category == FLOATING
        self.is_signed = is_signed

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    @property
    def is_complex(self):
        return self.category == COMPLEX

    def to_real(self):
        """The real dtype of this dtype's parts: float32 for complex64; itself if real."""
        return _REAL_OF.get(self, self)

    def to_complex(self):
        """The complex dtype with parts of this dtype: complex64 for float32 (float16 and
        bfloat16 too: ember has no complex32); itself if complex."""
        if self.category == COMPLEX:
            return self
        if self.category != FLOATING:
            raise RuntimeError(f"to_complex is only defined for floating types, got {self}")
        return complex128 if self is float64 else complex64


# NOTE [ bfloat16 ]
# NumPy has no bfloat16; the ml_dtypes package (JAX's) registers one, a real NumPy dtype
# with casts and ufunc loops. Its ``numpy.dtype.kind`` is ``'V'``, not ``'f'``, and
# np.finfo does not know it, so nothing in ember asks ``kind == 'f'``: a floating array
# is ``is_floating_array(a.dtype)`` (a set test) and limits come from ``finfo_of``.
# Its loops are not PyTorch's arithmetic (a Python float is no weak scalar: bfloat16
# array + 2.5 is float32; sums accumulate in bfloat16; matmul returns float32; einsum
# has no loop), so ember never computes on them: the dispatcher runs every bfloat16 op
# but views in float32 and rounds the result once to nearest-even, as PyTorch's CPU
# kernels do (NOTE [ opmath ] in opmath.py). A Python float operand (and add's alpha) of an op that
# is not opmath is rounded to bfloat16 first, as TensorIterator casts it; so is a tensor of
# another dtype (a 0-d float32 one), except as the second operand of mul and div, which
# PyTorch reads unrounded (``original_scalar_value<opmath_t>``). add's alpha is a
# bfloat16 too, and torch's vector and scalar loops scale by it differently (NOTE [ alpha
# in the two loops ] in opmath.py).
# Where ember differs: torch kernels that round between steps (rsqrt, x ** 3, prod,
# logsumexp, log_softmax's sum) or use other float32 approximations (gelu, silu) can
# end one bfloat16 step away (tests/core/test_bfloat16.py lists them); .numpy() refuses
# bfloat16 like torch, but from_numpy takes an ml_dtypes array, which torch refuses.
# CuPy has no bfloat16 dtype: ember's CUDA backend refuses bfloat16 tensors.
BFLOAT16_NP = np.dtype(ml_dtypes.bfloat16)

bool_ = dtype("bool", np.bool_, BOOL, False)
uint8 = dtype("uint8", np.uint8, INTEGRAL, False)
int8 = dtype("int8", np.int8, INTEGRAL, True)
int16 = dtype("int16", np.int16, INTEGRAL, True)
int32 = dtype("int32", np.int32, INTEGRAL, True)
int64 = dtype("int64", np.int64, INTEGRAL, True)
float16 = dtype("float16", np.float16, FLOATING, True)
bfloat16 = dtype("bfloat16", BFLOAT16_NP, FLOATING, True)
float32 = dtype("float32", np.float32, FLOATING, True)
float64 = dtype("float64", np.float64, FLOATING, True)
complex64 = dtype("complex64", np.complex64, COMPLEX, True)
complex128 = dtype("complex128", np.complex128, COMPLEX, True)

# NOTE [ Barebones dtypes ]
# torch has dtypes it stores, converts, saves and loads but barely computes in: the
# unsigned uint16, uint32 and uint64 ("barebones unsigned types" in
# c10/core/ScalarType.h) and the float8 formats of FP8 training and inference. They
# meet no other dtype in promotion (uint16 + int32 is an error; uint16 + float32 is
# float32) and most kernels are missing. ember holds them as NumPy's unsigned types and
# ml_dtypes' float8 types: a tensor of one can be made, converted (``to``, ``copy_``),
# viewed, indexed, printed, saved and loaded, with torch's conversions
# (``cast_array``). An op that promotes refuses them with torch's NotImplementedError.
# Where ember differs: torch has kernels for a few such ops (mul and bitwise_and of
# uint16, abs of float8); ember asks for a conversion first.
uint16 = dtype("uint16", np.uint16, INTEGRAL, False)
uint32 = dtype("uint32", np.uint32, INTEGRAL, False)
uint64 = dtype("uint64", np.uint64, INTEGRAL, False)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, FLOATING, True)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, FLOATING, True)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, FLOATING, True)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, FLOATING, True)
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, FLOATING, False)
BAREBONES_UNSIGNED = (uint16, uint32, uint64)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
BAREBONES_DTYPES = BAREBONES_UNSIGNED + FLOAT8
BAREBONES_NP = frozenset(d.np for d in BAREBONES_DTYPES)
_FLOAT8_NP = frozenset(d.np for d in FLOAT8)

# NOTE [ Complex dtypes ]
# A complex tensor is a NumPy complex64 or complex128 array: two float32 (float64)
# parts side by side, real first, as torch stores them, so view_as_real is a NumPy view
# with a trailing dimension of 2. Complex is a fourth promotion category above floating
# (bool < integer < floating < complex). Where a complex operand of lower priority meets
# a floating one, the result keeps the floating operand's precision: float64 tensor + 1j
# is complex128, float32 tensor + complex128 0-d tensor is complex64 (c10's
# combine_categories). Python complex scalars become the default complex dtype
# (complex64 while the default float is float32). ``is_floating_point()`` is False for
# complex, but complex tensors can require grad (``DIFFERENTIABLE_NP``).
# Where ember differs: no complex32 (torch's ComplexHalf); float16 + 1j is complex64.

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "bool": bool_, "cfloat": complex64, "cdouble": complex128}
_REAL_OF = {complex64: float32, complex128: float64}
_BY_NAME = {d.name: d for d in ALL_DTYPES + BAREBONES_DTYPES}
_BY_NUMPY = {d.np: d for d in ALL_DTYPES + BAREBONES_DTYPES}
FLOATING_NP = frozenset(d.np for d in ALL_DTYPES + FLOAT8 if d.is_floating_point)
COMPLEX_NP = frozenset((complex64.np, complex128.np))
# The dtypes autograd differentiates through: floating and complex.
DIFFERENTIABLE_NP = FLOATING_NP | COMPLEX_NP


# The names PyTorch prints for a dtype in its errors: ScalarType's names ("Float", as in
# "result type Float can't be cast to ...", c10/core/ScalarType.h) and the demangled C++
# element type ("float", "long int", as in "expected m1 and m2 to have the same dtype").
SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                     "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                     "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                     "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                     "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                     "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
                     "float8_e8m0fnu": "Float8_e8m0fnu"}
C_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
                "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                "float32": "float", "float64": "double",
                "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def is_floating_array(np_dtype):
    """Whether arrays of ``np_dtype`` hold an ember floating dtype (bfloat16 included,
    whose NumPy ``kind`` is ``'V'``: NOTE [ bfloat16 ]). Never ask ``kind == 'f'``."""
    return np_dtype in FLOATING_NP


def is_complex_array(np_dtype):
    """Whether arrays of ``np_dtype`` hold an ember complex dtype."""
    return np_dtype in COMPLEX_NP


def is_differentiable_array(np_dtype):
    """Whether autograd differentiates through arrays of ``np_dtype`` (floating, complex)."""
    return np_dtype in DIFFERENTIABLE_NP


def finfo_of(np_dtype):
    """NumPy's finfo for a floating ``np_dtype``, ml_dtypes' for bfloat16 and float8
    (np.finfo rejects them)."""
    return ml_dtypes.finfo(np_dtype) if is_ml_dtype(np_dtype) else np.finfo(np_dtype)


def is_ml_dtype(np_dtype):
    """Whether ``np_dtype`` is one NumPy lacks, held by ml_dtypes (bfloat16, float8): NumPy
    knows no byte order or type string for them, so files store their bits as unsigned ints."""
    return np_dtype.isbuiltin == 2  # 2: a user-defined type


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype stored as ``np_dtype``; raises TypeError for unsupported types."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _BY_NUMPY:
        return _BY_NUMPY[np_dtype]
    raise TypeError(
        f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
        "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
        "uint16, uint8, and bool.")


def to_dtype(value):
    """Accept an ember dtype, a NumPy dtype, or a Python type (float, int, bool)."""
    if isinstance(value, dtype):
        return value
    if value is float:
        return _default_dtype[0]
    if value is int:
        return int64
    if value is bool:
        return bool_
    if value is complex:
        return default_complex_dtype()
    return from_numpy_dtype(value)


# The default floating dtype. A one-element list, not a global rebinding, so that
# modules that imported it see changes (it is process state, like torch's).
_default_dtype = [float32]


def get_default_dtype():
    """The dtype that Python floats and float factories become (float32 unless set)."""
    return _default_dtype[0]


def default_complex_dtype():
    """The dtype Python complex numbers become: complex128 while the default float is
    float64, else complex64 (torch's default complex dtype follows the float one)."""
    return complex128 if _default_dtype[0] is float64 else complex64


def set_default_dtype(d):
    """Set the default floating dtype; only floating dtypes are allowed, as in PyTorch."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype[0] = d
    _promotion_cache.clear()


def _build_promotion_table():
    # Lattice of c10's promoteTypes for the types ember has: the smallest type that
    # holds both. uint8 with a signed int widens to the next signed size (int16).
    # float16 and bfloat16 hold neither each other (range against precision): they
    # meet in float32, the rank below is for every other pair of floats.
    table = {}
    ints_signed = [int8, int16, int32, int64]
    floats = [float16, bfloat16, float32, float64]
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            if a is b:
                r = a
            elif a is bool_ or b is bool_:
                r = b if a is bool_ else a
            elif a.is_complex or b.is_complex:
                r = _promote_complex(a, b)
            elif a.is_floating_point or b.is_floating_point:
                if {a, b} == {float16, bfloat16}:
                    r = float32
                elif a.is_floating_point and b.is_floating_point:
                    r = floats[max(floats.index(a), floats.index(b))]
                else:
                    r = a if a.is_floating_point else b
            elif a is uint8 or b is uint8:
                other = b if a is uint8 else a
                r = int16 if other is int8 else other
            else:
                r = ints_signed[max(ints_signed.index(a), ints_signed.index(b))]
            table[a, b] = r
    return table


def _promote_complex(a, b):
    # The complex type whose parts hold both floating parts: complex64 + float64 is
    # complex128, complex64 + int64 is complex64 (integers never widen a float).
    parts = [d.to_real() if d.is_complex else d for d in (a, b)]
    return complex128 if float64 in parts else complex64


_PROMOTE = _build_promotion_table()
for _d in BAREBONES_DTYPES:
    _PROMOTE[_d, _d] = _d
for _u in BAREBONES_UNSIGNED:  # a barebones unsigned type meets only the floating types
    for _f in (float16, bfloat16, float32, float64):
        _PROMOTE[_u, _f] = _PROMOTE[_f, _u] = _f


def _promote_pair(a, b):
    try:
        return _PROMOTE[a, b]
    except KeyError:
        pass
    kind = "Float8 Types" if a in FLOAT8 or b in FLOAT8 else "uint16, uint32, uint64 types"
    raise RuntimeError(f"Promotion for {kind} is not supported, attempted to promote "
                       f"{SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}")


class NoKernel(NotImplementedError):
    """An op that promotes met a barebones dtype (NOTE [ Barebones dtypes ]); the
    dispatcher names the op."""


_FLOAT16_NP, _FLOAT32_NP, _FLOAT64_NP = float16.np, float32.np, float64.np

# The reduced floats, and the type they compute in (NOTE [ opmath ] in opmath.py).
REDUCED_FLOATS = frozenset(d.np for d in ALL_DTYPES if d.is_floating_point and d.itemsize == 2)
OPMATH = float32.np


def accumulate_dtype(np_dtype):
    """The dtype a sum inside a composite kernel accumulates in: OPMATH for reduced
    floats (PyTorch's acc_type), else None (the input's own)."""
    return OPMATH if np_dtype in REDUCED_FLOATS else None


# NOTE [ float64 to float16 through float32 ]
# PyTorch converts a double to Half through float (c10::Half is built from a float), so a
# float64 value rounds twice: to float32, then to float16. NumPy rounds it once, straight
# to float16, and the two differ where the float32 rounding lands on a float16 tie
# (1 + 2**-11 + 2**-40 is 1.0 in torch, 1.0009765625 in NumPy) or past 65504 (65520 -
# 2**-30 is inf in torch). ``cast_array`` converts as PyTorch does; the casts of a tensor
# (``to``, ``half``, ``copy_``) and of the data a tensor is made from go through it.


def cast_array(array, np_dtype):
    """``array.astype(np_dtype)``; float64 to float16 through float32, as PyTorch (NOTE
    above), and float8 as PyTorch converts it (NOTE [ float8 conversions ])."""
    if np_dtype == _FLOAT16_NP and array.dtype == _FLOAT64_NP:
        with np.errstate(over="ignore"):  # past 65504 is inf, silently, as in torch
            return array.astype(_FLOAT32_NP).astype(np_dtype)
    if np_dtype in _FLOAT8_NP or array.dtype in _FLOAT8_NP:
        return _cast_float8(array, np_dtype)
    return array.astype(np_dtype)


# NOTE [ float8 conversions ]
# PyTorch converts to and from float8 through float (c10's Float8_* types are built from
# a float32), and ml_dtypes' direct casts differ from it in two formats: torch saturates
# float8_e4m3fn (every finite value past 448, and inf, becomes +-448; NaN stays NaN) where
# ml_dtypes gives NaN, and float8_e8m0fnu (an exponent alone, no sign) takes the
# magnitude of a negative number and writes 0 as its smallest code, 2**-127, where
# ml_dtypes gives NaN for both. The other formats round to nearest even in both.
def _cast_float8(array, np_dtype):
    with np.errstate(over="ignore", invalid="ignore"):
        single = array.astype(_FLOAT32_NP)
        if np_dtype == float8_e4m3fn.np:
            single = np.clip(single, -448.0, 448.0)  # NaN passes through clip
        elif np_dtype == float8_e8m0fnu.np:
            single = np.abs(single)
            single[single == 0] = np.float32(2.0**-127)
        return single.astype(np_dtype)


def python_float_as(value, np_dtype, check_overflow=False):
    """A Python float headed for ``np_dtype``: for float16, rounded to float32 first, so the
    write rounds twice as torch's (NOTE [ float64 to float16 through float32 ]); with
    ``check_overflow``, torch's error for a finite value float16 cannot hold (full,
    masked_fill; fill_ writes inf instead)."""
    if np_dtype != _FLOAT16_NP or value.__class__ is not float:
        return value
    if check_overflow and math.isfinite(value) and abs(value) > 65504.0:  # c10's overflows<Half>
        raise RuntimeError("value cannot be converted to type c10::Half without overflow")
    return float(np.float32(value))


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` can be cast to (``torch.promote_types``)."""
    return _promote_pair(a, b)


def can_cast(from_, to):
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor."""
    return from_.category <= to.category


_promotion_cache = {}


def scalar_dtype(value):
    """The dtype a Python scalar would have as a tensor: bool, int64 or the default float
    (a NumPy scalar as the Python number it reads as: NOTE [ NumPy scalars are Python numbers ])."""
    value = python_number(value)
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default_dtype[0]
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


# NOTE [ NumPy scalars are Python numbers ]
# Real programs hand ops NumPy scalars: ``x * np.sqrt(d)``, ``x - arr.max()``, a loop
# over ``np.arange``. PyTorch's argument parser reads one as the Python number it holds,
# so it is a weak operand like any scalar: float32 * np.float64(2.) is float32, uint8 +
# np.int64(300) wraps to uint8, as with 2.0 and 300. An integer (np.int8 ... np.uint64)
# reads as an int; a floating one (np.float16 ... np.float64) and np.bool_ as a float:
# PyTorch parses np.bool_ as a double, so int64 + np.bool_(True) is float32 and
# bool | np.bool_(True) has no kernel, unlike a Python bool.
# ember converts them where a scalar enters: in the dispatcher's branch for an operand
# that is neither a Tensor nor a Python number (so the float hot path pays nothing), for
# ops that promote (one that does not, such as where's kernel, takes the typed scalar its
# caller made), and in the functions that read a scalar before dispatching (comparisons,
# clamp, pow, full, where, masked_fill, fill_, setitem, alpha). Dims and sizes take a
# NumPy integer as an int. ``ember.tensor([np.float32(1.)])`` is another matter: there a
# NumPy scalar keeps its dtype (float32), as in torch.tensor.
# A 0-d NumPy array is no scalar: functions refuse it (TypeError) as PyTorch's do. One
# difference is left: PyTorch's ``x * np.array(2.)`` (and ``x == np.array(2.)``) hands
# the operation to NumPy (its operators turn a TypeError into NotImplemented) and wraps
# NumPy's result in a tensor; ember's operators are the op functions themselves (a
# wrapper would cost every ``x * 2.0``), so they raise the TypeError (== is False).


def python_number(value):
    """``value`` as the Python number PyTorch reads from it when it is a NumPy scalar
    (NOTE [ NumPy scalars are Python numbers ]); anything else unchanged."""
    if isinstance(value, np.generic):
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, (np.floating, np.bool_)):
            return float(value)
        if isinstance(value, np.complexfloating):
            return complex(value)
    return value


def python_numbers(values):
    """``python_number`` of each of ``values``, as a tuple."""
    return tuple([python_number(v) for v in values])


# NOTE [ Python ints wrap into integer dtypes ]
# A Python int operand does not widen an integer tensor (uint8 tensor + 1 is uint8), and
# PyTorch converts it to the computation dtype with C's wrap-around: uint8 > -1 compares
# with 255 (False), clamp(uint8, min=-1) is 255 everywhere, int8 < 300 compares with 44.
# NumPy instead raises OverflowError (arithmetic) or compares the true values, so the
# dispatcher hands kernels the wrapped value (``fit_int``).


def fit_int(value, np_dtype):
    """``value`` (a Python int) as ``np_dtype`` holds it: wrapped when it is out of an
    integer dtype's range, unchanged otherwise (NOTE [ Python ints wrap into integer dtypes ])."""
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        if not info.min <= value <= info.max:
            return np.array(value & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64).astype(np_dtype)[()]
    return value


def checked_int(value, np_dtype):
    """``fit_int`` for the ops that convert a scalar with PyTorch's overflow check
    (fill_, masked_fill, setitem, where, scatter, clamp): an unsigned dtype also takes
    negatives down to -max (they wrap: -1 is 255 for uint8), anything beyond raises."""
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        low = -int(info.max) if np_dtype.kind == "u" else int(info.min)
        if not low <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type {np_dtype.name}_t without overflow")
        return fit_int(value, np_dtype)
    return value


def result_type_from_keys(keys):
    """Promote operand keys: (priority, dtype) pairs, priority 2 = tensor with dims,
    1 = 0-d tensor, 0 = Python scalar. Cached: the set of keys per call is tiny."""
    cached = _promotion_cache.get(keys)
    if cached is not None:
        return cached
    by_priority = {}
    for priority, d in keys:
        current = by_priority.get(priority)
        by_priority[priority] = d if current is None else _promote_pair(current, d)
    result = None
    for priority in (2, 1, 0):
        d = by_priority.get(priority)
        if d is None:
            continue
        if result is None:
            result = d
        elif d.category > result.category:
            # A lower-priority operand of a higher category decides the category.
            # A Python float gives the default dtype; a 0-d tensor gives its own; a
            # complex one keeps a floating result's precision (NOTE [ Complex dtypes ]).
            keeps_precision = d.is_complex and result.is_floating_point
            result = result.to_complex() if keeps_precision else d
    _promotion_cache[keys] = result
    return result
