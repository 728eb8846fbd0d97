"""ember's dtypes and PyTorch's type promotion, checked against torch for every pair.

Covers ember/dtypes.py: ``promote_types``, ``result_type`` (dimensioned tensors, 0-d
tensors and Python scalars) and the dtype of ``a + b``; the default dtype.
"""

import itertools
import pickle

import numpy as np
import pytest
import torch

import ember

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
               "complex128"]
SCALARS = {"bool": True, "int": 3, "float": 2.5, "complex": 1.5 - 2j}


def as_torch(d):
    return getattr(torch, repr(d).removeprefix("ember."))


def without_complex32(d):
    """torch's dtype, its complex32 (float16 meeting a complex operand) read as complex64:
    ember has no complex32 (NOTE [ Complex dtypes ])."""
    return torch.complex64 if d == torch.complex32 else d


@pytest.fixture
def default_float64():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ember.set_default_dtype(ember.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_attributes_match_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert repr(e) == repr(t).replace("torch", "ember")
    assert e.is_floating_point == t.is_floating_point
    assert e.is_signed == t.is_signed
    assert e.itemsize == t.itemsize
    assert e.is_complex == t.is_complex
    assert pickle.loads(pickle.dumps(e)) is e


def test_aliases_are_the_same_objects():
    assert ember.float is ember.float32 and ember.double is ember.float64 and ember.half is ember.float16
    assert ember.long is ember.int64 and ember.int is ember.int32 and ember.short is ember.int16


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPE_NAMES, DTYPE_NAMES)))
def test_promote_types_matches_torch(a, b):
    result = ember.promote_types(getattr(ember, a), getattr(ember, b))
    assert as_torch(result) == torch.promote_types(getattr(torch, a), getattr(torch, b))


def _operand(lib, kind, dtype_name):
    """A dimensioned tensor ("dim"), a 0-d tensor ("0d") or a Python scalar."""
    if kind == "dim":
        return lib.ones(2, dtype=getattr(lib, dtype_name))
    if kind == "0d":
        return lib.ones((), dtype=getattr(lib, dtype_name))
    return SCALARS[kind]


def _operand_cases():
    tensor_kinds = [(k, d) for k in ("dim", "0d") for d in DTYPE_NAMES]
    scalar_kinds = [(k, None) for k in SCALARS]
    cases = []
    for left, right in itertools.product(tensor_kinds + scalar_kinds, repeat=2):
        if left[1] is None and right[1] is None:
            continue  # two Python scalars are no tensor operation
        cases.append((*left, *right))
    return cases


OPERAND_CASES = _operand_cases()


def _id(case):
    return "-".join(str(c) for c in case if c is not None)


@pytest.mark.parametrize("kind_a, dtype_a, kind_b, dtype_b", OPERAND_CASES, ids=[_id(c) for c in OPERAND_CASES])
def test_result_type_and_add_dtype_match_torch(kind_a, dtype_a, kind_b, dtype_b):
    ea, eb = _operand(ember, kind_a, dtype_a), _operand(ember, kind_b, dtype_b)
    ta, tb = _operand(torch, kind_a, dtype_a), _operand(torch, kind_b, dtype_b)
    assert as_torch(ember.result_type(ea, eb)) == without_complex32(torch.result_type(ta, tb))
    assert as_torch((ea + eb).dtype) == without_complex32((ta + tb).dtype)


@pytest.mark.parametrize("kind", ["dim", "0d"])
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("scalar", [True, 3, 2.5, 1.5 - 2j])
def test_result_type_under_float64_default(default_float64, kind, dtype_name, scalar):
    e, t = _operand(ember, kind, dtype_name), _operand(torch, kind, dtype_name)
    assert as_torch(ember.result_type(e, scalar)) == without_complex32(torch.result_type(t, scalar))
    assert as_torch((scalar * e).dtype) == without_complex32((scalar * t).dtype)


def test_default_dtype_float64_changes_python_floats(default_float64):
    assert ember.get_default_dtype() is ember.float64
    assert ember.tensor([1.0]).dtype is ember.float64
    assert ember.arange(0.5).dtype is ember.float64
    assert ember.zeros(2).dtype is ember.float64
    assert (ember.tensor([1, 2]) + 2.5).dtype is ember.float64
    assert (ember.tensor([1, 2]) / 2).dtype is ember.float64
    # Explicit float32 stays float32, and an int tensor stays int64.
    assert (ember.ones(2, dtype=ember.float32) + 2.5).dtype is ember.float32
    assert ember.tensor([1, 2]).dtype is ember.int64


def test_set_default_dtype_refuses_non_floating():
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError, match="floating"):
        ember.set_default_dtype(ember.int64)
    assert ember.get_default_dtype() is ember.float32


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_from_numpy_dtype_round_trips(name):
    d = getattr(ember, name)
    assert ember.dtypes.from_numpy_dtype(d.np) is d
    assert ember.dtypes.to_dtype(np.dtype(d.np)) is d


def test_python_types_as_dtypes():
    assert ember.dtypes.to_dtype(float) is ember.get_default_dtype()
    assert ember.dtypes.to_dtype(int) is ember.int64
    assert ember.dtypes.to_dtype(bool) is ember.bool
    assert ember.ones(2).to(int).dtype is ember.int64


def test_unsupported_numpy_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="can't convert np.ndarray of type float128"):
        ember.dtypes.from_numpy_dtype(np.longdouble)


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPE_NAMES, DTYPE_NAMES)))
def test_can_cast_matches_torch(a, b):
    assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


# NOTE [ Python ints wrap into integer dtypes ]: an int beyond the dtype's range wraps.
INT_WRAP_CASES = {
    "gt_negative": lambda lib, x: x > -1,
    "eq_negative": lambda lib, x: x == -1,
    "lt_beyond_int8": lambda lib, x: x.to(lib.int8) < 300,
    "ge_below_int8": lambda lib, x: x.to(lib.int8) >= -200,
    "add_negative": lambda lib, x: x + -1,
    "sub_beyond": lambda lib, x: x - 300,
    "mul_negative": lambda lib, x: x * -1,
    "and_negative": lambda lib, x: x & -1,
    "or_negative": lambda lib, x: x | -2,
    "rand_negative": lambda lib, x: -2 & x,
    "clamp_min_negative": lambda lib, x: x.clamp(min=-1),
    "clamp_max_negative": lambda lib, x: lib.clamp(x, max=-56),
    "where_negative": lambda lib, x: lib.where(x > 100, x, -1),
    "pow_negative_base": lambda lib, x: lib.pow(-1, x),
    "pow_negative_exponent": lambda lib, x: x.pow(-1),  # raises in both
    "masked_fill_negative": lambda lib, x: x.masked_fill(x > 100, -1),
    "fill_negative": lambda lib, x: x.clone().fill_(-3),
    "scatter_negative": lambda lib, x: x.scatter(0, lib.tensor([0]), -1),
    "setitem_negative": lambda lib, x: _setitem(x, 0, -1),
    "setitem_advanced_negative": lambda lib, x: _setitem(x, [1, 2], -2),
    "maximum_zero_d_negative": lambda lib, x: lib.maximum(x, lib.tensor(-1)),
    # Beyond -max..max the converting ops raise PyTorch's overflow error (arithmetic still wraps).
    "clamp_beyond_int8": lambda lib, x: x.to(lib.int8).clamp(min=300),
    "clamp_below_uint8": lambda lib, x: x.clamp(min=-256),
    "clamp_lowest_uint8": lambda lib, x: x.clamp(min=-255),
    "masked_fill_beyond": lambda lib, x: x.masked_fill(x > 100, 300),
    "fill_below": lambda lib, x: x.clone().fill_(-256),
    "where_beyond": lambda lib, x: lib.where(x > 100, x, 300),
    "setitem_beyond": lambda lib, x: _setitem(x, 0, 256),
    "pow_exponent_beyond": lambda lib, x: x ** 256,
    "pow_exponent_max": lambda lib, x: x ** 255,
    "clamp_bool_by_bools": lambda lib, x: (x > 100).clamp(True, False),
    "clamp_bool_min_bool": lambda lib, x: (x > 100).clamp(min=True),
    "clamp_bool_by_int": lambda lib, x: (x > 100).clamp(min=1),
}


def _setitem(x, key, value):
    y = x.clone()
    y[key] = value
    return y


@pytest.mark.parametrize("case", INT_WRAP_CASES, ids=list(INT_WRAP_CASES))
def test_python_ints_wrap_into_unsigned_and_small_int_dtypes(case):
    from ember.testing import assert_parity

    assert_parity(INT_WRAP_CASES[case], np.array([200, 0, 255, 7], dtype=np.uint8))


# NOTE [ opmath ]: float16 computes in float32 and rounds once, bit for bit like torch.
OPMATH_CASES = {
    "mul_scalar": lambda lib, x: x * 0.1,
    "div_scalar": lambda lib, x: x / 0.1,
    "rdiv_scalar": lambda lib, x: 0.1 / x,
    "floor_divide_scalar": lambda lib, x: x // 0.1,
    "add_scalar_rounds_first": lambda lib, x: x + 0.1,
    "rsub_scalar_rounds_first": lambda lib, x: 0.1 - x,
    "mul_inplace": lambda lib, x: x.clone().mul_(0.1),
    "lerp_scalar": lambda lib, x: lib.lerp(x, x * 0 + 1, 0.1),
    "addcmul_value": lambda lib, x: lib.addcmul(x, x, x, value=0.1),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "exp": lambda lib, x: x.exp(),
    "sum": lambda lib, x: x.sum(),
    "sum_dim": lambda lib, x: x.reshape(20, 100).sum(1),
    "sum_dtype_half": lambda lib, x: x.sum(dtype=lib.float16),
    "sum_dtype_float": lambda lib, x: x.sum(dtype=lib.float32),
    "mean": lambda lib, x: x.mean(),
    "mean_would_overflow": lambda lib, x: (x.abs() * 6000).mean(),
    "prod": lambda lib, x: (x / 4 + 1).prod(),
    "cumsum": lambda lib, x: x.cumsum(0),
    "std": lambda lib, x: x.std(),
    "var": lambda lib, x: x.var(0),
    "norm": lambda lib, x: x.norm(),
    "logsumexp": lambda lib, x: x.logsumexp(0),
    "softmax": lambda lib, x: x.softmax(0),
}


@pytest.mark.parametrize("case", OPMATH_CASES, ids=list(OPMATH_CASES))
def test_float16_computes_in_float32_like_torch(case):
    x = np.random.default_rng(0).uniform(-4, 4, 2000).astype(np.float16)
    expected = OPMATH_CASES[case](torch, torch.tensor(x))
    actual = OPMATH_CASES[case](ember, ember.tensor(x))
    assert actual.dtype.name == str(expected.dtype).removeprefix("torch.")
    if actual.dtype is ember.float16:
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())  # bit for bit, not within a tolerance
    else:  # float32 sums differ in summation order only
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)


def test_float16_mean_accumulates_in_float32():
    assert ember.tensor([6e4, 6e4], dtype=ember.float16).mean().item() == 6e4
