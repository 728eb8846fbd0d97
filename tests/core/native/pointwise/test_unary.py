"""Elementwise unary ops (ember/native/pointwise/unary.py) against PyTorch.

Each op is one row of ``UNARY``: its name, how to call it (the same lambda runs with
``lib = ember`` and ``lib = torch``) and the interval its random inputs are drawn from
(inside the domain, away from kinks). The tests below run every row through the same
checks: values, dtypes and gradients for several dtypes and shapes, non-contiguous
inputs, integer and bool inputs, domain edges (0, -1, inf, nan), finite-difference
gradcheck, the in-place method and the absence of NumPy warnings.
"""

import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor


class Unary(NamedTuple):
    name: str
    fn: Callable
    low: float = -3.0
    high: float = 3.0
    differentiable: bool = True


def method(name, **kwargs):
    return lambda lib, x: getattr(lib, name)(x, **kwargs)


UNARY = [
    Unary("neg", method("neg")),
    Unary("abs", method("abs")),
    Unary("sign", method("sign")),
    Unary("reciprocal", method("reciprocal"), 0.5, 3.0),
    Unary("exp", method("exp")),
    Unary("exp2", method("exp2")),
    Unary("expm1", method("expm1")),
    Unary("log", method("log"), 0.1, 5.0),
    Unary("log2", method("log2"), 0.1, 5.0),
    Unary("log10", method("log10"), 0.1, 5.0),
    Unary("log1p", method("log1p"), -0.9, 5.0),
    Unary("sqrt", method("sqrt"), 0.1, 5.0),
    Unary("rsqrt", method("rsqrt"), 0.1, 5.0),
    Unary("square", method("square")),
    Unary("sin", method("sin")),
    Unary("cos", method("cos")),
    Unary("tan", method("tan"), -1.2, 1.2),
    Unary("asin", method("asin"), -0.9, 0.9),
    Unary("acos", method("acos"), -0.9, 0.9),
    Unary("atan", method("atan")),
    Unary("sinh", method("sinh")),
    Unary("cosh", method("cosh")),
    Unary("tanh", method("tanh")),
    Unary("sigmoid", method("sigmoid"), -8.0, 8.0),
    Unary("erf", method("erf")),
    Unary("erfc", method("erfc")),
    Unary("erfinv", method("erfinv"), -0.9, 0.9),
    Unary("floor", method("floor")),
    Unary("ceil", method("ceil")),
    Unary("trunc", method("trunc")),
    Unary("round", method("round")),
    Unary("round_decimals", lambda lib, x: lib.round(x, decimals=1)),
    Unary("frac", method("frac")),
    Unary("clamp", lambda lib, x: lib.clamp(x, -1.0, 1.5)),
    Unary("clamp_min", lambda lib, x: lib.clamp(x, min=-0.5)),
    Unary("clamp_max", lambda lib, x: lib.clamp(x, max=0.5)),
    Unary("nan_to_num", method("nan_to_num")),
    Unary("positive", lambda lib, x: +x),
    Unary("operator_neg", lambda lib, x: -x),
    Unary("operator_abs", lambda lib, x: abs(x)),
]
UNARY_IDS = [op.name for op in UNARY]
DIFFERENTIABLE = [op for op in UNARY if op.differentiable]

SHAPES = [(), (0,), (2, 0, 3), (5,), (3, 4)]
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-30, 100.0, -100.0, np.inf, -np.inf, np.nan]


def inputs_for(op, shape, dtype="float32", seed=0):
    return make_tensor(shape, dtype, low=op.low, high=op.high, seed=seed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", UNARY, ids=UNARY_IDS)
def test_values_and_gradients(op, shape, dtype):
    assert_parity(op.fn, inputs_for(op, shape, dtype))


@pytest.mark.parametrize("op", UNARY, ids=UNARY_IDS)
def test_noncontiguous(op):
    assert_parity(op.fn, inputs_for(op, (3, 4)), noncontiguous=True)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("op", UNARY, ids=UNARY_IDS)
def test_integer_and_bool_inputs(op, dtype):
    # Integer inputs keep their dtype (neg, abs, floor), become the default float
    # (exp, sin, sqrt) or raise (frac), exactly as in PyTorch.
    assert_parity(op.fn, make_tensor((2, 3), dtype, low=-3, high=3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", UNARY, ids=UNARY_IDS)
def test_domain_edges(op, dtype):
    # Zero, negatives, tiny and huge values, infinities and NaN: values and gradients,
    # computed without a NumPy RuntimeWarning (PyTorch is silent).
    x = np.array(EDGES, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_parity(op.fn, x)


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=[op.name for op in DIFFERENTIABLE])
def test_gradcheck(op):
    x = ember.tensor(inputs_for(op, (2, 3), "float64", seed=3), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: op.fn(ember, t), (x,))


SECOND_ORDER = ["tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin",
                "atan", "erf", "erfinv", "sinh", "cosh", "expm1", "log1p", "abs", "clamp"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_gradients(name):
    op = next(op for op in UNARY if op.name == name)
    values = inputs_for(op, (4,), "float64", seed=5)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        y = op.fn(lib, x).sum()
        (first,) = lib.autograd.grad(y, x, create_graph=True)
        second = None
        if first.requires_grad:  # False where the first derivative is piecewise constant (clamp)
            (second,) = lib.autograd.grad(first.sum(), x, allow_unused=True)
        results.append((first.detach().numpy(), _zeros_if_none(second, values)))
    (e1, e2), (t1, t2) = results
    np.testing.assert_allclose(e1, t1, rtol=1e-10)
    np.testing.assert_allclose(e2, t2, rtol=1e-10, atol=1e-12)


def _zeros_if_none(grad, like):
    # torch answers "the gradient is zero" with None or a ZeroTensor (which has no numpy()).
    if grad is None or isinstance(grad, torch.Tensor) and grad._is_zerotensor():
        return np.zeros_like(like)
    return grad.detach().numpy()


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "log", "sqrt", "erfinv", "atan"])
def test_gradgradcheck(name):
    op = next(op for op in UNARY if op.name == name)
    x = ember.tensor(inputs_for(op, (3,), "float64", seed=7), requires_grad=True)
    g = ember.tensor(make_tensor((3,), "float64", seed=8), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: op.fn(ember, t), (x,), (g,))


# --- in-place variants ----------------------------------------------------------

INPLACE = ["neg", "abs", "sign", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
           "rsqrt", "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
           "erf", "erfc", "erfinv", "floor", "ceil", "trunc", "round", "frac", "nan_to_num"]


def _inplace_domain(name):
    return next(op for op in UNARY if op.name == name)


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_values_and_gradient_through_non_leaf(name):
    op = _inplace_domain(name)

    def fn(lib, x):
        y = x * 1.0           # a non-leaf, so the in-place write is allowed
        getattr(y, name + "_")()
        return y * 2.0

    assert_parity(fn, inputs_for(op, (2, 3), "float64"))


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_bumps_version_and_returns_self(name):
    op = _inplace_domain(name)
    x = ember.tensor(inputs_for(op, (4,)))
    before = x._version
    assert getattr(x, name + "_")() is x
    assert x._version == before + 1


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_on_leaf_requiring_grad_raises(name):
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(x, name + "_")()


@pytest.mark.parametrize("name", ["exp", "sqrt", "sin", "sigmoid", "reciprocal", "log"])
def test_inplace_float_result_into_int_tensor_raises(name):
    # exp of an integer tensor is float; writing it back into the integers is an error.
    assert_parity(lambda lib, x: getattr(x, name + "_")(), make_tensor((3,), "int64", low=1, high=3))


@pytest.mark.parametrize("name", ["neg", "abs", "floor", "sign"])
def test_inplace_keeps_integer_dtype(name):
    assert_parity(lambda lib, x: getattr(x.clone(), name + "_")(), make_tensor((5,), "int32"))


def test_inplace_on_a_view_writes_through_to_the_base():
    def fn(lib, x):
        base = x * 1.0
        base[1].exp_()
        return base

    assert_parity(fn, make_tensor((3, 2), "float64"))


# --- ops with options ------------------------------------------------------------

CLAMP_CASES = [
    ("min_and_max", lambda lib, x: lib.clamp(x, -1, 1)),
    ("min_above_max", lambda lib, x: lib.clamp(x, 1.0, -1.0)),
    ("integer_bounds", lambda lib, x: lib.clamp(x, min=-1)),
    ("tensor_bounds", lambda lib, x: lib.clamp(x, lib.zeros(4, dtype=x.dtype), lib.ones(4, dtype=x.dtype))),
    ("clip_alias", lambda lib, x: lib.clip(x, -0.5, 0.5)),
    ("clamp_min_fn", lambda lib, x: lib.clamp_min(x, 0.25)),
    ("clamp_max_fn", lambda lib, x: lib.clamp_max(x, 0.25)),
    ("method_and_inplace", lambda lib, x: (x * 1).clamp_(min=0.0)),
    ("clamp_min_", lambda lib, x: (x * 1).clamp_min_(0.1)),
    ("clamp_max_", lambda lib, x: (x * 1).clamp_max_(0.1)),
    ("nan_input", lambda lib, x: lib.clamp(lib.log(x), -1, 1)),  # log of negatives: nan
    ("no_bounds", lambda lib, x: lib.clamp(x)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("fn", [c[1] for c in CLAMP_CASES], ids=[c[0] for c in CLAMP_CASES])
def test_clamp(fn, dtype):
    assert_parity(fn, make_tensor((3, 4), dtype))


def test_clamp_gradient_flows_to_tensor_bounds():
    assert_parity(lambda lib, x, lo, hi: lib.clamp(x, lo, hi), make_tensor((3, 4), "float64"),
                  make_tensor((4,), "float64", low=-2, high=0, seed=1),
                  make_tensor((3, 1), "float64", low=0, high=2, seed=2))


@pytest.mark.parametrize("bounds", ["crossed", "equal", "nan", "min_only", "max_only"])
def test_clamp_gradients_at_odd_bounds(bounds):
    # Bounds that cross (min > max: the output is max), touch, or hold NaN; x holds NaN too.
    x = np.array([-3.0, -1.0, 0.0, 0.2, 0.5, 0.8, 1.0, 3.0, np.nan])
    lo, hi = {"crossed": (0.8, 0.2), "equal": (0.5, 0.5), "nan": (np.nan, 1.0), "min_only": (0.2, None),
              "max_only": (None, 0.8)}[bounds]
    tensors = [np.full(x.shape, b) for b in (lo, hi) if b is not None]

    def fn(lib, x, *bounds):
        given = iter(bounds)
        return lib.clamp(x, next(given) if lo is not None else None, next(given) if hi is not None else None)

    assert_parity(fn, x, *tensors)


def test_clamp_of_int_tensor_with_float_bound_promotes():
    assert_parity(lambda lib, x: lib.clamp(x, 0.5, 2.5), make_tensor((5,), "int64"))


@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.5}, {"posinf": 9.0, "neginf": -9.0}, {"nan": 0.0, "posinf": 1.0},
                                    {"nan": None}])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_to_num(kwargs, dtype):
    assert_parity(lambda lib, x: lib.nan_to_num(x, **kwargs), np.array(EDGES, dtype=dtype))


@pytest.mark.parametrize("decimals", [-1, 0, 2])
def test_round_decimals_and_half_to_even(decimals):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1.25, 12.5, 0.125, 125.0], dtype="float64")
    assert_parity(lambda lib, x: lib.round(x, decimals=decimals), x)


def test_sigmoid_is_stable_for_large_inputs():
    x = np.array([-1000.0, -100.0, -20.0, 0.0, 20.0, 100.0, 1000.0], dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_parity(lambda lib, x: lib.sigmoid(x), x)


def test_erfinv_at_the_ends_of_its_domain():
    assert_parity(lambda lib, x: lib.erfinv(x), np.array([-1.0, 1.0, -1.5, 1.5, 0.0], dtype="float32"), grad=False)


def test_unary_op_requires_a_tensor():
    with pytest.raises(TypeError):
        ember.exp(1.0)


def test_sgn_in_place():
    assert_parity(lambda lib, x: x.clone().sgn_(), make_tensor((3, 4), "float32"), grad=False)


@pytest.mark.parametrize("bounds", [{"min": "tensor", "max": 0.5}, {"min": 0.0, "max": "tensor"},
                                    {"min": "tensor", "max": "tensor"}, {"min": 0.0, "max": 0.5}])
def test_clamp_bounds_are_both_tensors_or_both_numbers(bounds):
    def fn(lib, x):
        kwargs = {k: x * 0 + 0.25 if v == "tensor" else v for k, v in bounds.items()}
        return lib.clamp(x, **kwargs)
    assert_parity(fn, make_tensor((3, 4)))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("decimals", [None, 0, 1])
def test_round_of_integers_with_decimals_raises_like_torch(dtype, decimals):
    # round.decimals, even with 0, has no integer kernel; plain round returns integers as they are.
    kwargs = {} if decimals is None else {"decimals": decimals}
    assert_parity(lambda lib, x: lib.round(x, **kwargs), make_tensor((5,), dtype), grad=False)
