"""Comparison, logical and bitwise ops and the float classifiers
(ember/native/pointwise/comparison.py) against PyTorch.

Each binary op is one row of ``BINARY`` (name and a lambda run with ``lib = ember`` and
``lib = torch``), each unary one a row of ``UNARY``. The rows go through the same
checks: dtypes (float, int, bool, mixed), broadcasting shape pairs, non-contiguous
inputs, Python scalars on either side, special values (±0, ±inf, nan), the Python
operators and the in-place forms. None of these ops has a gradient: their outputs
are bool or integer tensors that never require grad.
"""

import operator
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor


def function(name, **kwargs):
    return lambda lib, x, y: getattr(lib, name)(x, y, **kwargs)


def python_operator(op):
    return lambda lib, x, y: op(x, y)


BINARY = [
    ("eq", function("eq")),
    ("ne", function("ne")),
    ("lt", function("lt")),
    ("le", function("le")),
    ("gt", function("gt")),
    ("ge", function("ge")),
    ("greater_equal", function("greater_equal")),
    ("not_equal", function("not_equal")),
    ("operator_eq", python_operator(operator.eq)),
    ("operator_ne", python_operator(operator.ne)),
    ("operator_lt", python_operator(operator.lt)),
    ("operator_le", python_operator(operator.le)),
    ("operator_gt", python_operator(operator.gt)),
    ("operator_ge", python_operator(operator.ge)),
    ("logical_and", function("logical_and")),
    ("logical_or", function("logical_or")),
    ("logical_xor", function("logical_xor")),
    ("bitwise_and", function("bitwise_and")),
    ("bitwise_or", function("bitwise_or")),
    ("bitwise_xor", function("bitwise_xor")),
    ("operator_and", python_operator(operator.and_)),
    ("operator_or", python_operator(operator.or_)),
    ("operator_xor", python_operator(operator.xor)),
    ("isclose", function("isclose")),
    ("isclose_tolerances", function("isclose", rtol=0.5, atol=0.25)),
    ("isclose_equal_nan", function("isclose", equal_nan=True)),
]
BINARY_IDS = [name for name, _ in BINARY]
BINARY_FNS = [fn for _, fn in BINARY]

UNARY = [
    ("logical_not", lambda lib, x: lib.logical_not(x)),
    ("bitwise_not", lambda lib, x: lib.bitwise_not(x)),
    ("operator_invert", lambda lib, x: ~x),
    ("isnan", lambda lib, x: lib.isnan(x)),
    ("isinf", lambda lib, x: lib.isinf(x)),
    ("isfinite", lambda lib, x: lib.isfinite(x)),
    ("isposinf", lambda lib, x: lib.isposinf(x)),
    ("isneginf", lambda lib, x: lib.isneginf(x)),
]
UNARY_IDS = [name for name, _ in UNARY]
UNARY_FNS = [fn for _, fn in UNARY]

DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool"]
SHAPE_PAIRS = [((), ()), ((4,), ()), ((), (4,)), ((3, 4), (3, 4)), ((2, 1), (2,)), ((1, 3, 2), (3, 2)),
               ((0,), (1,)), ((2, 0, 3), (3,))]
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, 1e-6, np.inf, -np.inf, np.nan], dtype="float32")


def small_values(shape, dtype, seed):
    # Few distinct values, so that equalities and ties actually occur.
    return np.asarray(make_tensor(shape, dtype, low=-2, high=2, seed=seed).round(), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_dtypes(fn, dtype):
    # The output is bool (comparisons, logical ops) or the inputs' dtype (bitwise ops);
    # bitwise ops on floats raise, as in PyTorch.
    assert_parity(fn, small_values((3, 4), dtype, 0), small_values((3, 4), dtype, 1))


@pytest.mark.parametrize("dtypes", [("float32", "int64"), ("int8", "uint8"), ("bool", "int32"),
                                    ("float32", "float64"), ("int64", "float64")], ids=str)
@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_mixed_dtypes(fn, dtypes):
    # Comparisons promote first (int vs float compares as float); isclose insists on
    # one dtype; bitwise ops promote among integers.
    assert_parity(fn, small_values((2, 3), dtypes[0], 2), small_values((3,), dtypes[1], 3))


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_broadcasting(fn, shapes):
    assert_parity(fn, small_values(shapes[0], "int64", 4), small_values(shapes[1], "int64", 5))


@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_noncontiguous(fn):
    assert_parity(fn, small_values((3, 4), "float32", 6), small_values((3, 4), "float32", 7), noncontiguous=True)


@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_mismatched_shapes_raise(fn):
    assert_parity(fn, small_values((2, 3), "int64", 0), small_values((3, 2), "int64", 1))


@pytest.mark.parametrize("scalar", [1, 0, -1, 1.5, True, False], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_python_scalars(fn, dtype, scalar):
    # A scalar on the right, and on the left for the operators (`1 < x` is `x > 1`).
    # Functions like logical_and take no Python number in PyTorch: TypeError in both.
    x = small_values((2, 3), dtype, 8)
    assert_parity(lambda lib, t: fn(lib, t, scalar), x)
    assert_parity(lambda lib, t: fn(lib, scalar, t), x)


@pytest.mark.parametrize("fn", BINARY_FNS, ids=BINARY_IDS)
def test_binary_special_values(fn):
    # Every pair of ±0, ±1, 2.5, a tiny number, ±inf and nan; no NumPy RuntimeWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert_parity(fn, SPECIAL[:, None], SPECIAL[None, :])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", UNARY_FNS, ids=UNARY_IDS)
def test_unary_dtypes(fn, dtype):
    assert_parity(fn, small_values((3, 4), dtype, 9))


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (5,)], ids=str)
@pytest.mark.parametrize("fn", UNARY_FNS, ids=UNARY_IDS)
def test_unary_shapes_and_noncontiguous(fn, shape):
    assert_parity(fn, small_values(shape, "int32", 10))
    assert_parity(fn, SPECIAL.reshape(3, 3), noncontiguous=True)


@pytest.mark.parametrize("fn", UNARY_FNS, ids=UNARY_IDS)
def test_unary_special_values(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert_parity(fn, SPECIAL)


def test_outputs_never_require_grad():
    x = ember.tensor([1.0, 2.0, float("nan")], requires_grad=True)
    for out in (x == 1, x < x, ember.isnan(x), ember.logical_and(x, x), ember.isclose(x, x)):
        assert out.dtype is ember.bool and not out.requires_grad and out.grad_fn is None


# --- allclose, equal --------------------------------------------------------------

WHOLE_TENSOR = [
    ("allclose", lambda lib, x, y: lib.allclose(x, y)),
    ("allclose_loose", lambda lib, x, y: lib.allclose(x, y, rtol=0.5, atol=1.0)),
    ("allclose_equal_nan", lambda lib, x, y: lib.allclose(x, x / x, equal_nan=True)),
    ("allclose_method", lambda lib, x, y: x.allclose(y)),
    ("equal", lambda lib, x, y: lib.equal(x, y)),
    ("equal_self", lambda lib, x, y: lib.equal(x, x)),
    ("equal_method", lambda lib, x, y: x.equal(y)),
    ("equal_other_shape", lambda lib, x, y: lib.equal(x, x[:1])),
    ("equal_other_dtype", lambda lib, x, y: lib.equal(x, x.double())),
    ("equal_nan", lambda lib, x, y: lib.equal(x / x, x / x)),
    ("allclose_other_dtype", lambda lib, x, y: lib.allclose(x, x.double())),
    ("allclose_broadcast", lambda lib, x, y: lib.allclose(x, x[:1])),
]


@pytest.mark.parametrize("fn", [f for _, f in WHOLE_TENSOR], ids=[n for n, _ in WHOLE_TENSOR])
@pytest.mark.parametrize("values", ["same", "close", "far"])
def test_allclose_and_equal(fn, values):
    # Python bools (not tensors), equal to PyTorch's answer.
    x = make_tensor((2, 3), "float32")
    y = {"same": x, "close": x + np.float32(1e-7), "far": x + np.float32(0.5)}[values]
    x[0, 0] = 0.0  # x / x then holds one nan
    y = y.copy()
    y[0, 0] = 0.0
    actual, expected = assert_parity(fn, x, y, grad=False)
    assert type(actual) is type(expected)


def test_equal_of_empty_tensors():
    assert_parity(lambda lib, x, y: lib.equal(x, y), np.zeros((0, 3), "float32"), np.zeros((0, 3), "float32"))


# --- in-place forms ---------------------------------------------------------------

INPLACE = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_", "logical_or_", "logical_xor_",
           "bitwise_and_", "bitwise_or_", "bitwise_xor_"]


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float32"), ("bool", "bool"),
                                    ("int32", "int32"), ("bool", "int64")], ids=str)
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_writes_the_result_in_self_dtype(name, dtypes):
    # `x.lt_(y)` keeps x's dtype: a float tensor of 0s and 1s; a bool target refuses an
    # integer result (bitwise ops), as in PyTorch.
    def fn(lib, x, y):
        x = x.clone()
        assert getattr(x, name)(y) is x
        return x

    assert_parity(fn, small_values((2, 3), dtypes[0], 11), small_values((3,), dtypes[1], 12), grad=False)


@pytest.mark.parametrize("name", ["logical_not_", "bitwise_not_"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_inplace_unary(name, dtype):
    assert_parity(lambda lib, x: getattr(x.clone(), name)(), small_values((5,), dtype, 13), grad=False)


@pytest.mark.parametrize("name", ["iand", "ior", "ixor"])
def test_inplace_python_operators(name):
    def fn(lib, x, y):
        x = x.clone()
        before = id(x)
        x = getattr(operator, name)(x, y)
        assert id(x) == before
        return x

    assert_parity(fn, small_values((2, 3), "int64", 14), small_values((3,), "int64", 15))


def test_inplace_bumps_version():
    x = ember.tensor([1.0, 2.0, 3.0])
    view = x[1:]
    x.lt_(2.0)
    assert x._version == 1 and view._version == 1


def test_inplace_on_leaf_requiring_grad_raises():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.eq_(1.0)


def test_comparison_with_non_numbers():
    # `==` with an object that is not a tensor or a number is False (Python's fallback),
    # the function form raises TypeError.
    x = make_tensor((2,))
    assert_parity(lambda lib, t: t == None, x)  # noqa: E711
    assert_parity(lambda lib, t: t != "a", x)
    assert_parity(lambda lib, t: lib.eq(t, None), x)
