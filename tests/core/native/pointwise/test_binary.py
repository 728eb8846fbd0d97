"""Elementwise binary ops (ember/native/pointwise/binary.py, binary_functions.py) and their Python operators,
against PyTorch.

Each op is one row of ``BINARY``: its name, how to call it (the same lambda runs with
``lib = ember`` and ``lib = torch``) and the intervals the two random inputs are drawn
from. Every row goes through the same checks: values, dtypes and gradients over
broadcasting shape pairs and both float dtypes, non-contiguous inputs, integer and bool
inputs, Python scalars on either side, special values (0, inf, nan), gradcheck and the
in-place method. Dtype promotion has its own table.
"""

import operator
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember
from ember.testing import assert_parity, make_tensor


class Binary(NamedTuple):
    name: str
    fn: Callable
    first: tuple = (-3.0, 3.0)      # interval of the first input
    second: tuple = (-3.0, 3.0)     # interval of the second input
    inplace: str = None             # the Tensor method that does it in place
    differentiable: bool = True     # False: backward raises "derivative ... not implemented"


def function(name, **kwargs):
    return lambda lib, x, y: getattr(lib, name)(x, y, **kwargs)


def python_operator(op):
    return lambda lib, x, y: op(x, y)


POSITIVE = (0.5, 3.0)
# remainder/fmod/floor_divide: keep a/b away from integers, where they jump.
AWAY_FROM_ZERO = (1.1, 2.9)

BINARY = [
    Binary("add", function("add"), inplace="add_"),
    Binary("add_alpha", function("add", alpha=2.5)),
    Binary("sub", function("sub"), inplace="sub_"),
    Binary("sub_alpha", function("sub", alpha=-0.5)),
    Binary("rsub", function("rsub")),
    Binary("mul", function("mul"), inplace="mul_"),
    Binary("div", function("div"), second=POSITIVE, inplace="div_"),
    Binary("true_divide", function("true_divide"), second=POSITIVE, inplace="true_divide_"),
    Binary("div_trunc", function("div", rounding_mode="trunc"), second=AWAY_FROM_ZERO),  # zero gradients
    Binary("div_floor", function("div", rounding_mode="floor"), second=AWAY_FROM_ZERO),
    Binary("floor_divide", function("floor_divide"), second=AWAY_FROM_ZERO, inplace="floor_divide_",
           differentiable=False),
    Binary("remainder", function("remainder"), second=AWAY_FROM_ZERO, inplace="remainder_"),
    Binary("fmod", function("fmod"), second=AWAY_FROM_ZERO, inplace="fmod_"),
    Binary("pow", function("pow"), first=POSITIVE, inplace="pow_"),
    Binary("float_power", function("float_power"), first=POSITIVE),
    Binary("atan2", function("atan2"), inplace="atan2_"),
    Binary("maximum", function("maximum")),
    Binary("minimum", function("minimum")),
    Binary("fmax", function("fmax")),
    Binary("fmin", function("fmin")),
    Binary("lerp", lambda lib, x, y: lib.lerp(x, y, 0.3), inplace=None),
    Binary("lerp_tensor_weight", lambda lib, x, w: lib.lerp(x, x * 2 + 1, w)),
    Binary("where", lambda lib, x, y: lib.where(x > 0, x, y)),
    Binary("operator_add", python_operator(operator.add)),
    Binary("operator_sub", python_operator(operator.sub)),
    Binary("operator_mul", python_operator(operator.mul)),
    Binary("operator_truediv", python_operator(operator.truediv), second=POSITIVE),
    Binary("operator_floordiv", python_operator(operator.floordiv), second=AWAY_FROM_ZERO, differentiable=False),
    Binary("operator_mod", python_operator(operator.mod), second=AWAY_FROM_ZERO),
    Binary("operator_pow", python_operator(operator.pow), first=POSITIVE),
]
BINARY_IDS = [op.name for op in BINARY]
DIFFERENTIABLE = [op for op in BINARY if op.differentiable]

SHAPE_PAIRS = [((), ()), ((4,), ()), ((), (4,)), ((3, 4), (3, 4)), ((2, 1), (2,)), ((1, 3, 2), (3, 2)),
               ((3, 1, 2), (1, 4, 1)), ((0,), (1,)), ((2, 0, 3), (3,)), ((2, 0, 3), ())]


def inputs_for(op, shapes, dtype="float32", seed=0):
    (a_shape, b_shape), (a_low, a_high), (b_low, b_high) = shapes, op.first, op.second
    a = make_tensor(a_shape, dtype, low=a_low, high=a_high, seed=seed)
    b = make_tensor(b_shape, dtype, low=b_low, high=b_high, seed=seed + 1)
    if b_low > 0 and op.first[0] < 0:
        b = b * np.where(make_tensor(b_shape, "float64", seed=seed + 2) > 0, 1, -1).astype(dtype)  # both signs
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_values_and_gradients(op, shapes, dtype):
    assert_parity(op.fn, *inputs_for(op, shapes, dtype))


@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0, max_side=3),
       op=st.sampled_from(DIFFERENTIABLE))
def test_any_broadcastable_shapes(shapes, op):
    # The law of broadcasting, on random shape pairs: same result shape, values and
    # gradients (reduced back to each input's shape) as PyTorch.
    assert_parity(op.fn, *inputs_for(op, shapes.input_shapes, "float64"))


@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_noncontiguous(op):
    assert_parity(op.fn, *inputs_for(op, ((3, 4), (3, 4))), noncontiguous=True)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_integer_and_bool_inputs(op, dtype):
    # Integers stay integers (add, floor_divide), become the default float (div, atan2)
    # or raise (lerp; sub of two bools; a zero divisor), as in PyTorch.
    a = make_tensor((2, 3), dtype, low=-4, high=4, seed=0)
    b = make_tensor((3,), dtype, low=1 if op.second[0] > 0 else -4, high=4, seed=1)
    assert_parity(op.fn, a, b)


SCALARS = [2, -3, 2.5, -0.75, True, 0]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_python_scalar_on_either_side(op, scalar, dtype):
    # The scalar is "weak": it never widens the tensor's dtype within its category.
    x = make_tensor((2, 3), dtype, low=0.5, high=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert_parity(lambda lib, t: op.fn(lib, t, scalar), x)
        # The reflected forms (`2 - x`); PyTorch 2.13's backward of `True ** x` fails an
        # internal assert, so that one pair is left out.
        if op.name.startswith("operator") and not (op.name == "operator_pow" and scalar is True):
            assert_parity(lambda lib, t: op.fn(lib, scalar, t), x)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan], dtype="float32")


# add, sub and mul skip NumPy's errstate to keep the hot path short, so inf - inf and
# overflow may warn there (NOTE [ Floating-point warnings ] in ember/native/pointwise/unary.py).
HOT_PATH = {"add", "add_alpha", "sub", "sub_alpha", "rsub", "mul", "operator_add", "operator_sub", "operator_mul"}


@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_special_values_without_warnings(op):
    # Every pair of 0, ±1, 2.5, ±inf, nan: values and gradients as PyTorch's, and no
    # NumPy RuntimeWarning ("divide by zero", "invalid value") on the way.
    a, b = SPECIAL[:, None], SPECIAL[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if op.name in HOT_PATH else "error", RuntimeWarning)
        assert_parity(op.fn, a, b)


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=[op.name for op in DIFFERENTIABLE])
def test_gradcheck(op):
    a, b = inputs_for(op, ((2, 3), (3,)), "float64", seed=4)
    inputs = (ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True))
    assert ember.autograd.gradcheck(lambda x, y: op.fn(ember, x, y), inputs)


@pytest.mark.parametrize("name", ["mul", "div", "pow", "atan2", "sub_alpha", "lerp_tensor_weight", "maximum"])
def test_second_order_gradients(name):
    op = next(op for op in BINARY if op.name == name)
    a, b = inputs_for(op, ((3,), (3,)), "float64", seed=6)
    results = []
    for lib in (ember, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = op.fn(lib, x, y)
        gx, gy = lib.autograd.grad((out * out).sum(), (x, y), create_graph=True)
        second = lib.autograd.grad((gx * gy).sum(), (x, y))
        results.append([g.detach().numpy() for g in (gx, gy, *second)])
    for actual, expected in zip(*results):
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("wrt", [0, 1])
def test_atan2_gradients_at_the_origin(wrt):
    # At (0, 0) torch's gradient is 0 (signed by the other input), not 0/0; its second
    # derivative there is NaN. Signed zeros and points off the origin around it.
    values = [0.0, -0.0, 1.0, -2.0]
    a, b = np.array(values).repeat(4), np.array(values * 4)
    results = []
    for lib in (ember, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        gx, gy = lib.autograd.grad(lib.atan2(x, y).sum(), (x, y), create_graph=True)
        second = lib.autograd.grad((gx, gy)[wrt].sum(), (x, y))
        results.append([g.detach().numpy() for g in (gx, gy, *second)])
    for actual, expected in zip(*results):
        np.testing.assert_array_equal(actual, expected)
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))


@pytest.mark.parametrize("name", ["mul", "div", "pow", "atan2"])
def test_gradgradcheck(name):
    op = next(op for op in BINARY if op.name == name)
    a, b = inputs_for(op, ((3,), (3,)), "float64", seed=9)
    inputs = (ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True))
    assert ember.autograd.gradgradcheck(lambda x, y: op.fn(ember, x, y), inputs)


# --- dtype promotion --------------------------------------------------------------

PROMOTION = [
    ("int_tensor_plus_float_scalar", lambda lib, x: x + 2.5, "int64"),
    ("int_tensor_times_bool_scalar", lambda lib, x: x * True, "int32"),
    ("int_div_int", lambda lib, x: x / x, "int64"),
    ("int_div_int_scalar", lambda lib, x: x / 2, "int16"),
    ("int_floordiv_int", lambda lib, x: x // 2, "int64"),
    ("int8_plus_int64_0d", lambda lib, x: x + lib.tensor(3), "int8"),
    ("int8_plus_int64_1d", lambda lib, x: x + lib.tensor([3]), "int8"),
    ("uint8_plus_int8", lambda lib, x: x + lib.tensor([1], dtype=lib.int8), "uint8"),
    ("uint8_minus_wraps", lambda lib, x: x - lib.tensor([200], dtype=lib.uint8), "uint8"),
    ("int32_plus_float64_0d", lambda lib, x: x + lib.tensor(1.5, dtype=lib.float64), "int32"),
    ("float32_plus_float64_0d", lambda lib, x: x + lib.tensor(1.5, dtype=lib.float64), "float32"),
    ("float32_plus_float64_1d", lambda lib, x: x + lib.tensor([1.5], dtype=lib.float64), "float32"),
    ("float16_times_float_scalar", lambda lib, x: x * 0.1, "float16"),
    ("bool_plus_bool", lambda lib, x: x + x, "bool"),
    ("bool_times_bool", lambda lib, x: x * x, "bool"),
    ("bool_minus_bool", lambda lib, x: x - x, "bool"),
    ("bool_minus_bool_scalar", lambda lib, x: x - True, "bool"),
    ("bool_plus_int_scalar", lambda lib, x: x + 1, "bool"),
    ("bool_div_bool", lambda lib, x: x / (x | True), "bool"),
    ("bool_pow", lambda lib, x: x ** 2, "bool"),
    ("int_pow_float_scalar", lambda lib, x: x ** 0.5, "int64"),
    ("int_pow_negative_int", lambda lib, x: x ** -1, "int64"),
    ("int_pow_negative_int_tensor", lambda lib, x: lib.pow(x, lib.tensor([-1, 2])), "int64"),
    ("scalar_pow_int_tensor", lambda lib, x: 2 ** x, "int64"),
    ("float_scalar_pow_int_tensor", lambda lib, x: 1.5 ** x, "int64"),
    ("int_atan2", lambda lib, x: lib.atan2(x, x + 1), "int32"),
    ("int_maximum_float", lambda lib, x: lib.maximum(x, x.float()), "int64"),
    ("int_remainder_float_scalar", lambda lib, x: x % 1.5, "int64"),
    ("uint8_plus_negative_scalar_wraps", lambda lib, x: x + (-1), "uint8"),
    ("int8_plus_big_scalar_wraps", lambda lib, x: x + 1000, "int8"),
    ("uint8_times_big_scalar_wraps", lambda lib, x: x * 300, "uint8"),
    ("uint8_minus_big_scalar_wraps", lambda lib, x: x - 300, "uint8"),
    ("uint8_floordiv_256_is_by_zero", lambda lib, x: x // 256, "uint8"),
    ("int8_remainder_big_scalar", lambda lib, x: x % 1001, "int8"),
    ("int_div_by_zero_int", lambda lib, x: x // (x * 0), "int64"),
    ("int_remainder_by_zero", lambda lib, x: x % 0, "int64"),
    ("int_div_trunc_by_zero", lambda lib, x: lib.div(x, 0, rounding_mode="trunc"), "int64"),
    ("int_div_trunc_negative", lambda lib, x: lib.div(x - 3, 2, rounding_mode="trunc"), "int64"),
    ("int_div_floor_negative", lambda lib, x: lib.div(x - 3, 2, rounding_mode="floor"), "int64"),
    ("int_fmod_negative", lambda lib, x: lib.fmod(x - 3, 2), "int64"),
    ("int_add_float_alpha", lambda lib, x: lib.add(x, x, alpha=1.5), "int64"),
    ("lerp_of_int", lambda lib, x: lib.lerp(x, x, 0.5), "int64"),
    ("lerp_mixed_float_dtypes", lambda lib, x: lib.lerp(x, x.double(), 0.5), "float32"),
    ("div_bad_rounding_mode", lambda lib, x: lib.div(x, x, rounding_mode="round"), "float32"),
]


@pytest.mark.parametrize("fn, dtype", [(f, d) for _, f, d in PROMOTION], ids=[name for name, _, _ in PROMOTION])
def test_dtype_promotion(fn, dtype):
    assert_parity(fn, make_tensor((2,), dtype, low=1, high=3))


def test_mismatched_shapes_raise():
    assert_parity(lambda lib, x, y: x + y, make_tensor((3,)), make_tensor((4,)))
    assert_parity(lambda lib, x, y: lib.mul(x, y), make_tensor((2, 3)), make_tensor((3, 2)))


def test_matmul_operator_and_reflection():
    assert_parity(lambda lib, x, y: x @ y, make_tensor((2, 3)), make_tensor((3, 4)))


# --- in-place variants ----------------------------------------------------------

INPLACE = [op for op in BINARY if op.inplace]
INPLACE_OPERATORS = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul),
                     ("/=", operator.itruediv), ("//=", operator.ifloordiv), ("%=", operator.imod),
                     ("**=", operator.ipow)]


@pytest.mark.parametrize("op", INPLACE, ids=[op.inplace for op in INPLACE])
def test_inplace_values_and_gradient_through_non_leaf(op):
    def fn(lib, x, y):
        z = x * 1.0  # a non-leaf, so writing into it is allowed
        out = getattr(z, op.inplace)(y)
        assert out is z
        return z * 2.0

    assert_parity(fn, *inputs_for(op, ((2, 3), (3,)), "float64"))


@pytest.mark.parametrize("name, iop", INPLACE_OPERATORS, ids=[n for n, _ in INPLACE_OPERATORS])
def test_inplace_python_operators(name, iop):
    def fn(lib, x, y):
        z = x * 1.0
        z_id = id(z)
        z = iop(z, y)
        assert id(z) == z_id  # the same tensor object, written in place
        return z

    assert_parity(fn, make_tensor((2, 3), "float64", low=0.5), make_tensor((3,), "float64", low=1.1, high=2.9))


@pytest.mark.parametrize("op", INPLACE, ids=[op.inplace for op in INPLACE])
def test_inplace_bumps_version(op):
    a, b = inputs_for(op, ((3,), (3,)))
    x = ember.tensor(a)
    version = x._version
    view = x[1:]
    getattr(x, op.inplace)(ember.tensor(b))
    assert x._version == version + 1
    assert view._version == version + 1  # views share the counter


@pytest.mark.parametrize("op", INPLACE, ids=[op.inplace for op in INPLACE])
def test_inplace_on_leaf_requiring_grad_raises(op):
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(x, op.inplace)(lib.full((3,), 2.0))


@pytest.mark.parametrize("call", [
    lambda lib, x: x.add_(1.5),
    lambda lib, x: x.mul_(lib.tensor([0.5, 2.0])),
    lambda lib, x: x.div_(2),
    lambda lib, x: x.true_divide_(x),
    lambda lib, x: x.sub_(True),
    lambda lib, x: x.pow_(0.5),
    lambda lib, x: x.atan2_(x),
    lambda lib, x: x.clamp_(0.5, 1.5),
    lambda lib, x: x.add_(x, alpha=1.5),
    lambda lib, x: x.sub_(x > 1),
])
def test_inplace_integer_target_refuses_what_torch_refuses(call):
    # An integer tensor cannot hold a float result; float alpha and bool operands of
    # sub are errors too (also on the no-grad fast path of add_/sub_/mul_).
    assert_parity(call, make_tensor((2,), "int64", low=1, high=3))


@pytest.mark.parametrize("call", [
    lambda lib, x: x.add_(2),
    lambda lib, x: x.mul_(lib.tensor(3)),
    lambda lib, x: x.sub_(lib.tensor([1, 1], dtype=lib.int64)),
    lambda lib, x: x.floor_divide_(2),
    lambda lib, x: x.remainder_(2),
    lambda lib, x: x.pow_(2),
    lambda lib, x: x.clamp_(min=2),
    lambda lib, x: x.div_(2, rounding_mode="floor"),
    lambda lib, x: x.div_(-2, rounding_mode="trunc"),
    lambda lib, x: x.to(lib.uint8).add_(-1),
    lambda lib, x: x.to(lib.uint8).mul_(300),
    lambda lib, x: x.to(lib.int8).sub_(300),
])
def test_inplace_integer_results_keep_the_dtype(call):
    # Python ints beyond the dtype's range wrap around, on the no-grad fast path too.
    assert_parity(lambda lib, x: call(lib, x.clone()), make_tensor((2,), "int32", low=1, high=5))


def test_inplace_div_with_rounding_mode_through_non_leaf():
    def fn(lib, x, y):
        z = x * 1.0
        z.div_(y, rounding_mode="floor")
        return z * x

    assert_parity(fn, make_tensor((2, 3), "float64"), make_tensor((3,), "float64", low=1.1, high=2.9, seed=5))


def test_inplace_float32_target_accepts_float64_operand():
    # The result is computed in float32 (the 1-d float32 tensor wins) and written back.
    assert_parity(lambda lib, x: (x * 1).add_(lib.tensor(1.5, dtype=lib.float64)), make_tensor((3,)))


def test_inplace_broadcast_result_bigger_than_target_raises():
    assert_parity(lambda lib, x, y: (x * 1).add_(y), make_tensor((3,)), make_tensor((2, 3)))


def test_inplace_saves_the_old_value_for_backward():
    # mul_ needs x's old value for y's gradient; it must not see the product.
    def fn(lib, x, y):
        z = x + 0.0
        z.mul_(y)
        z.mul_(y)
        return z

    assert_parity(fn, make_tensor((3,), "float64"), make_tensor((3,), "float64", seed=2))


def test_inplace_on_a_view_gives_the_base_a_gradient():
    def fn(lib, x, y):
        base = x * 1.0
        base[0].mul_(y)
        base[1:].add_(y, alpha=2)
        return base

    assert_parity(fn, make_tensor((3, 2), "float64"), make_tensor((2,), "float64", seed=3))


def test_inplace_on_a_saved_tensor_is_detected():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        z = y * y
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


@pytest.mark.parametrize("op", [lambda lib, x: x // 0, lambda lib, x: lib.remainder(x, 0),
                                lambda lib, x: lib.div(x, 0, rounding_mode="trunc"), lambda lib, x: x % 0])
def test_integer_division_of_an_empty_tensor_by_zero_is_empty(op):
    assert_parity(op, np.zeros((0, 3), dtype=np.int64))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_float_power_in_place_needs_a_float64_base(dtype):
    # The result is float64 and float_power_ does not narrow it (PyTorch's rule).
    x, y = make_tensor((2, 3), dtype, low=1, high=3), make_tensor((2, 3), "float64", seed=2)
    assert_parity(lambda lib, x, y: x.clone().float_power_(y), x, y, grad=False)
