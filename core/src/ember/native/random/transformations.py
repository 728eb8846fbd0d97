"""From a generator's 32/64-bit words to uniform floats, normals, integers, coin flips and
permutations, exactly as ATen's CPU kernels make them.

PyTorch counterpart: aten/src/ATen/core/TransformationHelper.h (the transformations),
aten/src/ATen/core/DistributionsHelper.h (which draw each one takes),
aten/src/ATen/native/cpu/DistributionTemplates.h (the CPU kernels: the order of draws,
the vectorised Box-Muller) and ``randperm_cpu`` in
aten/src/ATen/native/TensorFactories.cpp (v2.13).

Every function here works on the host, in NumPy, and returns a flat array of ``n``
samples in the order PyTorch's kernel writes them (the output's memory order); the
callers (ember/native/factory.py, ember/native/random/distributions.py) shape them. The numbers
equal torch's CPU numbers for the same generator state on x86-64 (see NOTE [ What is
not matched ] for the exceptions).

# NOTE [ What is not matched ]
# - bfloat16 samples (h12's dtype) and complex tensors: not implemented here.
# - ``bernoulli_(p)`` with a float ``p`` (hence dropout masks) on an *Intel* CPU:
#   PyTorch builds with MKL draw one 32-bit seed from the generator and then use
#   MKL's own MCG31 stream, split across threads; ember follows PyTorch's portable
#   kernel, which torch itself runs on every other CPU (AMD, ARM). Dropout masks are
#   drawn this way.
# - float32 normals of 16 or more contiguous elements follow PyTorch's x86-64 (AVX2)
#   kernel, which torch also uses on AVX-512 machines; torch on ARM uses the C
#   library's ``logf``/``cosf`` there and gives other last bits.
# - ``multinomial`` without replacement asked for more samples than there are positive
#   weights: the zero-weight categories tie (key 0) and come last in torch in the order
#   its partial sort leaves them; ember lists them by index.
# - ``randperm`` of more than 2**32 / 20 elements follows the same source but could not
#   be compared with torch (the tensors are gigabytes).
"""

import math

import numpy as np

from ember.dtypes import is_floating_array
from ember.native.random import avx_mathfun

_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}  # significand bits


# --- uniform floats ----------------------------------------------------------------------


def _unit_interval(generator, n, opmath):
    """``n`` uniforms on [0, 1) in ``opmath`` (float32 or float64): the low 24 bits of
    one 32-bit word times 2**-24, or the low 53 bits of one 64-bit word times 2**-53
    (``transformation::uniform_real``). Every value is exact: an integer times a power
    of two."""
    if opmath == np.float64:
        words = generator.random64(n) & np.uint64(2 ** 53 - 1)
        return words.astype(np.float64) * 2.0 ** -53
    words = generator.random(n) & np.uint64(2 ** 24 - 1)
    return words.astype(np.float32) * np.float32(2.0 ** -24)


def _opmath(np_dtype):
    """Half precision computes in float32, as PyTorch's ``opmath_type``."""
    return np.float64 if np_dtype == np.float64 else np.float32


def uniform(generator, n, np_dtype, low=0.0, high=1.0):
    """``uniform_(low, high)``: ``x * (high - low) + low`` for x uniform on [0, 1), in the
    opmath type with one rounding (the compiler fuses it into a multiply-add); a value
    that rounds up to ``high`` in the output dtype becomes ``low`` (never ``high``)."""
    opmath = _opmath(np_dtype)
    x = _unit_interval(generator, n, opmath)
    low_op, high_op = opmath(low), opmath(high)
    if low_op == 0 and high_op == 1:
        values = x
    else:
        values = _fused_multiply_add(x, high_op - low_op, low_op, opmath)
    out = values.astype(np_dtype)
    return np.where(out == np_dtype.type(high), np_dtype.type(low), out)


def uniform_real(generator, n, low, high):
    """``n`` draws of ATen's scalar ``uniform_real_distribution<double>(low, high)``
    (rrelu's slopes): a 53-bit uniform x, then ``x * (high - low) + low`` in double,
    rounded after the product and after the sum (the kernel is compiled without FMA)."""
    x = _unit_interval(generator, n, np.float64)
    return x * (float(high) - float(low)) + float(low)


def _fused_multiply_add(a, b, c, opmath):
    if opmath == np.float32:
        return avx_mathfun.fma(a, b, c)
    return fma64(a, b, c)


def fma64(a, b, c):
    """``a * b + c`` in float64 with one rounding: the product's exact low part comes
    from Veltkamp splitting (Dekker's two-product), then two error-free sums."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64))
    product = a * b
    with np.errstate(over="ignore", invalid="ignore"):
        error = _two_product_error(a, b, product)
        total = product + c
        # TwoSum: total + sum_error == product + c exactly.
        b_virtual = total - product
        sum_error = (product - (total - b_virtual)) + (c - b_virtual)
        fused = total + (sum_error + error)
    return np.where(np.isfinite(fused), fused, product + c)


def _two_product_error(a, b, product):
    split = 134217729.0  # 2**27 + 1
    a_big = a * split
    a_high = a_big - (a_big - a)
    a_low = a - a_high
    b_big = b * split
    b_high = b_big - (b_big - b)
    b_low = b - b_high
    return ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low


# --- normals -----------------------------------------------------------------------------


def normal(generator, n, np_dtype, mean=0.0, std=1.0, vectorised=True):
    """``normal_(mean, std)``: PyTorch has two kernels (NOTE [ Two Box-Muller kernels ]);
    ``vectorised`` says whether the output is contiguous (the fill kernel then serves
    16 elements or more)."""
    if vectorised and n >= 16:
        return _normal_fill(generator, n, np_dtype, mean, std)
    return normal_scalar(generator, n, mean, std).astype(np_dtype)


# NOTE [ Two Box-Muller kernels ]
# Box-Muller turns two uniforms u1, u2 into two normals r*cos(t), r*sin(t) with
# r = sqrt(-2 log(1 - u1)), t = 2 pi u2. PyTorch's CPU kernel has two layouts:
# - the fill kernel (16 contiguous elements or more): first every output element gets
#   a uniform, then each block of 16 is transformed in place, element j and j + 8 of the
#   block (j < 8) being the pair: cos goes to j, sin to j + 8. If 16 does not divide n,
#   16 fresh uniforms overwrite the last 16 elements, which are transformed as one more
#   block (so the tail overlaps the last full block). float32 uses the AVX2 log and
#   sincos (ember/native/random/avx_mathfun.py), float64 the C library's, half precision works
#   in float32 one block at a time and draws 16 uniforms per block, no more.
# - the scalar kernel (fewer elements, or a non-contiguous output): each element is one
#   call of a double-precision Box-Muller on two 53-bit uniforms; the call returns
#   r*cos(t) and keeps r*sin(t) in the generator for the next call (so an odd count
#   leaves a normal cached for the next scalar draw, and a seed drops it). Here
#   r = sqrt(-2 log1p(-u2)) and t = 2 pi u1: the roles of u1 and u2 are swapped.


def _normal_fill(generator, n, np_dtype, mean, std):
    opmath = _opmath(np_dtype)
    blocks = n // 16
    if np_dtype == opmath:
        uniforms = _unit_interval(generator, n, opmath)
        head = uniforms[:blocks * 16]
    else:  # half: 16 draws per block, no more
        head = _unit_interval(generator, blocks * 16, opmath)
    out = np.empty(n, dtype=opmath)
    out[:blocks * 16] = _box_muller_blocks(head, opmath, mean, std)
    if n % 16:
        tail = _unit_interval(generator, 16, opmath)
        out[n - 16:] = _box_muller_blocks(tail, opmath, mean, std)
    return out.astype(np_dtype)


def _box_muller_blocks(uniforms, opmath, mean, std):
    """Transform blocks of 16 uniforms: elements j and j + 8 of a block are a pair."""
    u = uniforms.reshape(-1, 16)
    u1 = opmath(1) - u[:, :8]
    u2 = u[:, 8:]
    out = np.empty_like(u)
    if opmath == np.float32:
        radius = np.sqrt(np.float32(-2) * avx_mathfun.log256_ps(u1))
        sine, cosine = avx_mathfun.sincos256_ps(np.float32(2 * math.pi) * u2)
        out[:, :8] = avx_mathfun.fma(radius * cosine, np.float32(std), np.float32(mean))
        out[:, 8:] = avx_mathfun.fma(radius * sine, np.float32(std), np.float32(mean))
    else:
        radius = np.sqrt(-2 * libm("log", u1))
        theta = (2.0 * math.pi) * u2
        out[:, :8] = fma64(radius * libm("cos", theta), std, mean)
        out[:, 8:] = fma64(radius * libm("sin", theta), std, mean)
    return out.reshape(-1)


def normal_scalar(generator, n, mean=0.0, std=1.0):
    """``n`` normals from PyTorch's scalar double-precision Box-Muller, with the cached
    second value of each pair (float64; the caller rounds to its dtype)."""
    values = np.empty(n, dtype=np.float64)
    start = 0
    if n and generator.next_double_normal is not None:
        values[0] = generator.next_double_normal
        generator.next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = _unit_interval(generator, 2 * pairs, np.float64).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * libm("log1p", -u[:, 1]))
        theta = 2.0 * math.pi * u[:, 0]
        pair_values = np.stack([radius * libm("cos", theta), radius * libm("sin", theta)], axis=1).reshape(-1)
        values[start:] = pair_values[:n - start]
        if (n - start) % 2:
            generator.next_double_normal = float(pair_values[-1])
    if mean != 0.0 or std != 1.0:
        values = fma64(values, std, mean)
    return values


def libm(name, x):
    """The C library's double-precision ``name`` (PyTorch's scalar kernels call it).
    NumPy's float64 ``log``/``sin``/``cos`` give the same bits on machines without
    AVX-512; where NumPy dispatches them to its AVX-512 approximations, ember calls
    Python's ``math`` (the C library) element by element instead."""
    if _NUMPY_IS_LIBM:
        return getattr(np, name)(x)
    return np.frompyfunc(getattr(math, name), 1, 1)(x).astype(np.float64)


def _numpy_is_libm():
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__
    return not __cpu_features__.get("AVX512_SKX", False)


_NUMPY_IS_LIBM = _numpy_is_libm()


# --- integers ------------------------------------------------------------------------------


def random_from_to(generator, n, low, span):
    """``random_(low, low + span)``: ``word % span + low``, one 32-bit word per sample,
    or one 64-bit word when ``span`` is 2**28 or more, so that the modulo's bias stays
    small (``uniform_int_from_to_distribution``; PyTorch's internal builds use 2**32
    and only for wide dtypes). Returns int64."""
    wide = span >= 2 ** 28
    words = generator.random64(n) if wide else generator.random(n)
    offset = (words % np.uint64(span)).astype(np.uint64)
    return (offset + np.uint64(low & 0xFFFF_FFFF_FFFF_FFFF)).view(np.int64)


def random_full_range(generator, n):
    """``random_(-2**63, None)``: every 64-bit word read as a signed integer."""
    return generator.random64(n).view(np.int64)


def random_default(generator, n, np_dtype):
    """``random_()`` without bounds: [0, max] for integers, [0, 2**digits] for floats,
    a coin (the word's low bit) for bool (``transformation::uniform_int``)."""
    kind = np.dtype(np_dtype)
    if kind == np.bool_:
        return (generator.random(n) & np.uint64(1)).astype(np.bool_)
    wide = kind in (np.int64, np.float64)
    words = generator.random64(n) if wide else generator.random(n)
    if is_floating_array(kind):
        modulus = 2 ** _DIGITS[kind.name] + 1
    else:
        modulus = int(np.iinfo(kind).max) + 1
    return (words % np.uint64(modulus)).astype(np.int64)


# --- coin flips ----------------------------------------------------------------------------


def bernoulli_scalar(generator, n, p):
    """``bernoulli_(p)`` for a float ``p``: a 53-bit uniform below ``p`` (see NOTE
    [ What is not matched ] for torch's MKL kernel on Intel CPUs)."""
    return _unit_interval(generator, n, np.float64) < p


def bernoulli_tensor(generator, probabilities):
    """``bernoulli(p)`` for a tensor of probabilities (flat, in memory order): one
    uniform per element, 53-bit when ``p`` is float64, else 24-bit compared in float32."""
    if probabilities.dtype == np.float64:
        return _unit_interval(generator, probabilities.size, np.float64) < probabilities
    return _unit_interval(generator, probabilities.size, np.float32) < probabilities.astype(np.float32)


def exponential(generator, n, lambd):
    """``exponential_(lambd)``: ``-1 / lambd * log1p(-u)`` for a 53-bit uniform u, in double."""
    u = _unit_interval(generator, n, np.float64)
    return (-1.0 / lambd) * libm("log1p", -u)


def cauchy(generator, n, median, sigma):
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 1/2))``, 53-bit u, in double."""
    u = _unit_interval(generator, n, np.float64)
    return median + sigma * libm("tan", math.pi * (u - 0.5))


def log_normal(generator, n, mean, std):
    """``log_normal_(mean, std)``: exp of the scalar kernel's normals (with its cache)."""
    return libm("exp", normal_scalar(generator, n, mean, std))


def geometric(generator, n, p):
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))`` trials, 53-bit u, in double."""
    u = _unit_interval(generator, n, np.float64)
    with np.errstate(divide="ignore"):
        return np.ceil(libm("log", u) / math.log1p(-p))


# --- permutations --------------------------------------------------------------------------

_SMALL_RANDPERM = (2 ** 32 - 1) // 20


def randperm(generator, n):
    """A random permutation of 0 .. n-1, int64 (PyTorch's ``randperm_cpu``).

    Small n (below 2**32 / 20): the Fisher-Yates shuffle from the front, swapping
    position i with i + (32-bit word % (n - i)), n - 1 draws. Larger n: the
    "inside-out" shuffle with 64-bit words, so the modulo stays unbiased.
    """
    if n <= 1:
        return np.arange(n, dtype=np.int64)  # nothing to swap, nothing drawn
    if n < _SMALL_RANDPERM:
        offsets = generator.random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
        if n < _VECTORISED_SHUFFLE:
            return _swap_in_order(offsets)
        return _swap_vectorised(offsets)
    targets = (generator.random64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    order = np.empty(n, dtype=np.int64)
    for i, z in enumerate(targets):
        order[i] = order[z]
        order[z] = i
    return order


def _swap_in_order(offsets):
    """Step i swaps positions i and i + offsets[i], one after the other."""
    order = list(range(len(offsets) + 1))
    for i, offset in enumerate(offsets.tolist()):  # each swap depends on the ones before
        j = i + offset
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


# NOTE [ The front-to-back shuffle without a Python loop ]
# Step i swaps positions i and t_i = i + offset_i >= i, so after step i position i is
# final: it receives what position t_i holds just before step i. Position p is changed
# before step p only by the steps k < p with t_k = p, each of which puts there what
# position k held before step k. So with held[p] = "what p holds before step p":
#   held[p] = held[k] for the last k < p with t_k = p, else p (untouched);
#   final[i] = held[i] if t_i = i, else held[k] for the last k < i with t_k = t_i, else t_i.
# "The last earlier step with the same target" comes from one sort of the steps by
# target; the chains held[p] -> held[k] resolve by pointer doubling (log n gathers).
# It gives the loop's permutation, about three times faster for a million elements.
_VECTORISED_SHUFFLE = 2 ** 16


def _swap_vectorised(offsets):
    n = len(offsets) + 1
    steps = np.arange(n - 1)
    targets = steps + offsets.astype(np.int64)
    by_target = np.lexsort((steps, targets))  # steps grouped by target, each group in step order
    grouped = targets[by_target]
    same = grouped[1:] == grouped[:-1]
    earlier_same_target = np.full(n - 1, -1)
    earlier_same_target[by_target[1:][same]] = by_target[:-1][same]

    positions = np.arange(n)
    last = np.searchsorted(grouped, positions, side="right") - 1  # the last step targeting p, if any
    last_safe = np.maximum(last, 0)
    last_into = np.where((last >= 0) & (grouped[last_safe] == positions), by_target[last_safe], -1)
    own = last_into == positions  # step p swapping p with itself comes after "before step p"
    last_into[own] = earlier_same_target[last_into[own]]

    held = np.where(last_into >= 0, last_into, positions)
    while True:  # pointer doubling: follow each chain to the untouched position it starts from
        jumped = held[held]
        if np.array_equal(jumped, held):
            break
        held = jumped
    final = np.empty(n, dtype=np.int64)
    from_target = np.where(earlier_same_target >= 0, held[np.maximum(earlier_same_target, 0)], targets)
    final[:-1] = np.where(targets == steps, held[:-1], from_target)
    final[-1] = held[-1]
    return final
