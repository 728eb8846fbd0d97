"""NumPy scalars as op operands, checked against torch: read as the Python number they
hold (NOTE [ NumPy scalars are Python numbers ] in ember/dtypes.py), so weak in type
promotion, wrapped into integer dtypes, accepted by comparisons, and ``np.bool_`` read as
a float, as PyTorch's argument parser reads them; 0-d NumPy arrays refused by functions.

Covers ember/dispatcher.py (the NumPy-scalar branch of dispatch), ember/dtypes.py
(``python_number``, ``scalar_dtype``), the Tensor operators (``__array_priority__``) and
the functions that read a scalar before dispatching (comparisons, clamp, full, where,
masked_fill, fill_, add's alpha, tensor's dtype inference, dims).
"""

import warnings

import numpy as np
import pytest
import torch

import ember

NUMPY_SCALARS = {
    "float16": np.float16(2.5), "float32": np.float32(2.5), "float64": np.float64(2.5),
    "int8": np.int8(3), "int16": np.int16(3), "int32": np.int32(3), "int64": np.int64(3), "uint8": np.uint8(3),
    "bool": np.bool_(True),
}
# Integers out of the tensor dtype's range, which PyTorch wraps (uint8 + 300 is uint8 + 44).
WRAPPING_SCALARS = {"int64_300": np.int64(300), "int16_-1": np.int16(-1), "int32_-129": np.int32(-129)}
ALL_SCALARS = {**NUMPY_SCALARS, **WRAPPING_SCALARS}
TENSOR_DTYPES = ["float32", "float64", "float16", "int64", "int8", "uint8", "bool"]
VALUES = [[0, 1, 2], [3, 0, 1]]


def make(lib, dtype):
    return lib.tensor(VALUES, dtype=getattr(lib, dtype))


def outcome(fn):
    """``fn()``'s result as comparable data: (dtype name, values) for a tensor, the
    exception type for an error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error)
    if isinstance(result, (torch.Tensor, ember.Tensor)):
        return str(result.dtype).split(".")[-1], result.detach().numpy().tolist()
    return type(result).__name__, result


def assert_same(ember_fn, torch_fn):
    expected = outcome(torch_fn)
    got = outcome(ember_fn)
    if isinstance(expected, tuple) and isinstance(got, tuple) and expected[0] == got[0] != "str":
        np.testing.assert_allclose(np.asarray(got[1], dtype=float), np.asarray(expected[1], dtype=float),
                                   rtol=1e-3, equal_nan=True)
    else:
        assert got == expected


BINARY = {
    "add": lambda t, s: t + s, "radd": lambda t, s: s + t,
    "sub": lambda t, s: t - s, "rsub": lambda t, s: s - t,
    "mul": lambda t, s: t * s, "rmul": lambda t, s: s * t,
    "div": lambda t, s: t / s, "rdiv": lambda t, s: s / t,
    "floordiv": lambda t, s: t // s, "mod": lambda t, s: t % s,
    "pow": lambda t, s: t ** s,
    "and": lambda t, s: t & s, "rand": lambda t, s: s & t, "or": lambda t, s: t | s,
    "fn_add": lambda t, s: t.add(s), "fn_mul": lambda t, s: t.mul(s),
    "iadd": lambda t, s: t.clone().__iadd__(s), "imul": lambda t, s: t.clone().__imul__(s),
    "isub": lambda t, s: t.clone().sub_(s), "idiv": lambda t, s: t.clone().div_(s),
    "alpha": lambda t, s: t.add(t, alpha=s),
}
COMPARISONS = {
    "gt": lambda t, s: t > s, "lt": lambda t, s: t < s, "ge": lambda t, s: t >= s, "le": lambda t, s: t <= s,
    "eq": lambda t, s: t == s, "ne": lambda t, s: t != s,
    "reflected_gt": lambda t, s: s > t, "reflected_le": lambda t, s: s <= t, "reflected_eq": lambda t, s: s == t,
    "method_gt": lambda t, s: t.gt(s), "inplace_lt": lambda t, s: t.clone().lt_(s),
}


def _function(name):
    return lambda lib: lambda t, s: getattr(lib, name)(t, s)


FUNCTIONS = {name: _function(name) for name in ["gt", "lt", "ge", "le", "eq", "ne", "add", "mul", "sub", "div",
                                                 "remainder", "pow", "maximum"]}


OPERATORS = {**BINARY, **COMPARISONS}


@pytest.mark.parametrize("scalar", ALL_SCALARS, ids=str)
@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
@pytest.mark.parametrize("op", OPERATORS)
def test_operators_and_comparisons_match_torch(op, dtype, scalar):
    assert_operator_parity(OPERATORS[op], ALL_SCALARS[scalar], dtype)


def assert_operator_parity(fn, operand, dtype):
    """``fn(tensor, operand)`` gives the same in both libraries, a tensor of ``dtype``."""
    assert_same(lambda: fn(make(ember, dtype), operand), lambda: fn(make(torch, dtype), operand))


@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_match_torch(name, dtype, scalar):
    s = NUMPY_SCALARS[scalar]
    assert_same(lambda: FUNCTIONS[name](ember)(make(ember, dtype), s),
                lambda: FUNCTIONS[name](torch)(make(torch, dtype), s))


def test_numpy_float64_keeps_a_float32_network_float32():
    # The example: x * np.sqrt(3.) stays float32, so a float32 Linear takes it.
    ember.manual_seed(0)
    layer = ember.nn.Linear(3, 2)
    y = layer(ember.ones(4, 3) * np.sqrt(3.0))
    assert y.dtype is ember.float32
    assert (ember.ones(2) * np.float64(2.0)).dtype is ember.float32
    assert (np.float64(2.0) * ember.ones(2)).dtype is ember.float32  # the tensor's operator, not NumPy's
    assert isinstance(np.float64(2.0) * ember.ones(2), ember.Tensor)


def test_numpy_scalar_operand_records_the_same_graph():
    x, tx = ember.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    (x * np.float64(3.0) + np.float32(1.0)).pow(np.int64(2)).sum().backward()
    (tx * np.float64(3.0) + np.float32(1.0)).pow(np.int64(2)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


SCALAR_ARGUMENTS = {
    "full": lambda lib, s: lib.full((2,), s),
    "full_like": lambda lib, s: lib.full_like(lib.arange(3), s),
    "clamp_min": lambda lib, s: make(lib, "float32").clamp(min=s),
    "clamp_uint8": lambda lib, s: make(lib, "uint8").clamp(min=s),
    "clamp_max_fn": lambda lib, s: lib.clamp_max(make(lib, "int64"), s),
    "where_other": lambda lib, s: lib.where(make(lib, "bool"), make(lib, "float32"), s),
    "where_both": lambda lib, s: lib.where(make(lib, "bool"), s, s),
    "where_int": lambda lib, s: lib.where(make(lib, "bool"), make(lib, "uint8"), s),
    "masked_fill": lambda lib, s: make(lib, "int64").masked_fill(make(lib, "bool"), s),
    "fill_": lambda lib, s: make(lib, "float16").fill_(s),
    "setitem": lambda lib, s: _setitem(make(lib, "int8"), s),
    "lerp": lambda lib, s: lib.lerp(make(lib, "float32"), make(lib, "float32") * 2, s),
    "result_type": lambda lib, s: str(lib.result_type(make(lib, "uint8"), s)).split(".")[-1],
    "tensor_list": lambda lib, s: lib.tensor([s, s]),
    "tensor_mixed_float": lambda lib, s: lib.tensor([s, 1.5]),
    "tensor_mixed_int": lambda lib, s: lib.tensor([s, 1]),
    "tensor_scalar": lambda lib, s: lib.tensor(s),
}


def _setitem(t, value):
    t[0, 1] = value
    return t


@pytest.mark.parametrize("scalar", ALL_SCALARS, ids=str)
@pytest.mark.parametrize("case", SCALAR_ARGUMENTS)
def test_scalar_arguments_match_torch(case, scalar):
    s = ALL_SCALARS[scalar]
    fn = SCALAR_ARGUMENTS[case]
    assert_same(lambda: fn(ember, s), lambda: fn(torch, s))


INTEGER_ARGUMENTS = {
    "index": lambda lib, i: make(lib, "int64")[i],
    "view": lambda lib, i: lib.arange(6).view(i, -1).shape,
    "reshape": lambda lib, i: lib.arange(6).reshape((i, -1)).shape,
    "zeros": lambda lib, i: lib.zeros(i, 3).shape,
    "arange": lambda lib, i: lib.arange(i),
    "sum_dim": lambda lib, i: make(lib, "float32").sum(dim=i),
    "mean_dim": lambda lib, i: lib.mean(make(lib, "float32"), i, keepdim=True),
    "prod_dim": lambda lib, i: make(lib, "float32").prod(i),
    "amax_dim": lambda lib, i: make(lib, "float32").amax(i),
    "softmax_dim": lambda lib, i: make(lib, "float32").softmax(i),
    "squeeze": lambda lib, i: lib.ones(1, 2, 1).squeeze(i - 1).shape,
    "unsqueeze": lambda lib, i: make(lib, "float32").unsqueeze(i).shape,
    "transpose": lambda lib, i: make(lib, "float32").transpose(i - 1, i).shape,
    "flip": lambda lib, i: make(lib, "float32").flip(i),
    "roll": lambda lib, i: make(lib, "float32").roll(1, i),
    "cat": lambda lib, i: lib.cat([make(lib, "float32")] * 2, i - 1).shape,
    "topk": lambda lib, i: make(lib, "float32").flatten().topk(i).values,
    "narrow": lambda lib, i: make(lib, "float32").narrow(1, i - 1, i),
    "repeat": lambda lib, i: make(lib, "float32").repeat(i, 1).shape,
}


@pytest.mark.parametrize("kind", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("case", INTEGER_ARGUMENTS)
def test_numpy_integers_as_ints_match_torch(case, kind):
    i = getattr(np, kind)(1)
    fn = INTEGER_ARGUMENTS[case]
    assert_same(lambda: fn(ember, i), lambda: fn(torch, i))


def test_dropout_takes_a_numpy_probability():
    x = ember.ones(4)
    assert ember.equal(ember.nn.functional.dropout(x, p=np.float64(0.5), training=False), x)
    ember.manual_seed(0)
    torch.manual_seed(0)
    np.testing.assert_array_equal(ember.nn.functional.dropout(ember.ones(8), p=np.float64(0.5)).numpy(),
                                  torch.nn.functional.dropout(torch.ones(8), p=np.float64(0.5)).numpy())


ZERO_D_ARRAYS = {"float64": np.array(2.0), "int64": np.array(3), "float32": np.array(2.0, dtype=np.float32)}
REFUSING = {
    "mul_fn": lambda lib, a: lib.mul(make(lib, "float32"), a),
    "full": lambda lib, a: lib.full((2,), a),
    "clamp": lambda lib, a: make(lib, "float32").clamp(min=a),
    "where": lambda lib, a: lib.where(make(lib, "bool"), make(lib, "float32"), a),
    "gt_operator": lambda lib, a: make(lib, "float32") > a,
    "gt_function": lambda lib, a: lib.gt(make(lib, "float32"), a),
    "arange": lambda lib, a: lib.arange(a),
    "reflected_mul": lambda lib, a: a * make(lib, "float32"),
}


@pytest.mark.parametrize("array", ZERO_D_ARRAYS)
@pytest.mark.parametrize("case", REFUSING)
def test_zero_d_numpy_arrays_are_no_scalars(case, array):
    # PyTorch's functions take a Tensor or a Number; a 0-d NumPy array is neither.
    a = ZERO_D_ARRAYS[array]
    fn = REFUSING[case]
    assert_same(lambda: fn(ember, a), lambda: fn(torch, a))
    assert outcome(lambda: fn(ember, a)) is TypeError


NUMPY_ARRAYS = dict(ZERO_D_ARRAYS, vector=np.array([2.0, 0.5, -1.0]),
                    mismatched=np.array([1.0, 2.0]), int32=np.array(2, np.int32))
# NOTE [ NumPy arrays as operator operands ]: the forward operators let NumPy compute
# (its dtype rules, the result back as a tensor), the reflected ones and the ordered
# comparisons refuse, `!=` falls back to identity.
ARRAY_OPERATORS = {
    "add": lambda t, a: t + a, "radd": lambda t, a: a + t, "sub": lambda t, a: t - a, "rsub": lambda t, a: a - t,
    "mul": lambda t, a: t * a, "rmul": lambda t, a: a * t, "div": lambda t, a: t / a, "rdiv": lambda t, a: a / t,
    "floordiv": lambda t, a: t // a, "mod": lambda t, a: t % a, "pow": lambda t, a: t ** a,
    "rpow": lambda t, a: a ** t, "eq": lambda t, a: t == a, "ne": lambda t, a: t != a, "gt": lambda t, a: t > a,
    "le": lambda t, a: a <= t, "and": lambda t, a: t & a, "or": lambda t, a: t | a, "lshift": lambda t, a: t << a,
    "matmul": lambda t, a: t @ a if a.ndim == 1 else t,
    "imul_statement": lambda t, a: _imul(t.clone(), a),
}


def _imul(t, a):
    t *= a
    return t


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("array", NUMPY_ARRAYS)
@pytest.mark.parametrize("op", ARRAY_OPERATORS)
def test_numpy_array_operands_of_operators_match_torch(op, array, dtype):
    assert_operator_parity(ARRAY_OPERATORS[op], NUMPY_ARRAYS[array], dtype)


def test_numpy_computing_with_a_tensor_that_requires_grad_refuses_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
            lib.ones(2, requires_grad=True) * np.array(2.0)


def test_python_number_reads_numpy_scalars_as_pytorch_does():
    from ember.dtypes import python_number

    assert python_number(np.int8(-3)) == -3 and python_number(np.int8(-3)).__class__ is int
    assert python_number(np.float16(0.5)).__class__ is float
    assert python_number(np.bool_(True)).__class__ is float  # PyTorch parses np.bool_ as a double
    assert python_number(np.array(2.0)).__class__ is np.ndarray  # an array stays what it is
    assert python_number(True) is True
