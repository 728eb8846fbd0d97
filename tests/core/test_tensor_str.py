"""``repr(tensor)`` is PyTorch's, character for character (ember/_tensor_str.py), and the
autograd node names it shows (``grad_fn=<MulBackward0>``) are PyTorch's names.

Every case builds the same tensor with ``lib = ember`` and ``lib = torch`` and compares
``repr(ember_tensor).replace("ember", "torch")`` with ``repr(torch_tensor)``.
"""

import numpy as np
import pytest
import torch

import ember

NAN, INF = float("nan"), float("inf")

REPR_CASES = {
    # integers, alignment of negative numbers
    "ints": lambda lib: lib.tensor([1, 2, 3]),
    "negative_ints": lambda lib: lib.tensor([-1, 20, -300]),
    "int64_extremes": lambda lib: lib.tensor([10 ** 12, -5]),
    "int8": lambda lib: lib.tensor([[-128, 5]], dtype=lib.int8),
    "int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    "uint8": lambda lib: lib.tensor([1, 255], dtype=lib.uint8),
    # floats needing 4 decimals, integer-valued floats
    "four_decimals": lambda lib: lib.tensor([1.5, 2.25, -3.125]),
    "one_decimal_value": lambda lib: lib.tensor([0.1]),
    "integer_valued": lambda lib: lib.tensor([1.0, 2.0]),
    "integer_valued_negative": lambda lib: lib.tensor([-1.0, 2.0, 100.0]),
    "zeros": lambda lib: lib.zeros(3),
    "negative_zero": lambda lib: lib.tensor([-0.0, 1.0]),
    "aligned_2d": lambda lib: lib.tensor([[-1.5, 100.25], [3.0, -0.5]]),
    "large_integer_valued": lambda lib: lib.tensor([123456789.0]),
    # scientific mode
    "sci_large": lambda lib: lib.tensor([1e10, 2.0]),
    "sci_small": lambda lib: lib.tensor([1e-5, 2.0]),
    "sci_wide_range": lambda lib: lib.tensor([0.001, 10.0, 1.5]),
    "sci_integer_valued": lambda lib: lib.tensor([1.0, 1e9]),
    "sci_negative": lambda lib: lib.tensor([-1e-5, 2e5]),
    "sci_tiny": lambda lib: lib.tensor([1e-10]),
    # nan and inf
    "nan_inf": lambda lib: lib.tensor([NAN, 1.5, INF, -INF]),
    "nan_with_integers": lambda lib: lib.tensor([NAN, 1.0, 2.0]),
    "only_nonfinite": lambda lib: lib.tensor([NAN, INF]),
    "only_nan": lambda lib: lib.tensor([NAN]),
    "nan_negative": lambda lib: lib.tensor([1.5, NAN, -2.25]),
    "inf_sci": lambda lib: lib.tensor([1e-6, INF]),
    # bools
    "bools": lambda lib: lib.tensor([True, False, True]),
    "all_true": lambda lib: lib.tensor([True, True]),
    "bool_2d": lambda lib: lib.tensor([[True, False], [False, False]]),
    # 0-d
    "0d_float": lambda lib: lib.tensor(3.5),
    "0d_integer_valued": lambda lib: lib.tensor(3.0),
    "0d_int": lambda lib: lib.tensor(3),
    "0d_bool": lambda lib: lib.tensor(True),
    "0d_float64": lambda lib: lib.tensor(1.5, dtype=lib.float64),
    "0d_float16": lambda lib: lib.tensor(2.5, dtype=lib.float16),
    # empty
    "empty": lambda lib: lib.tensor([]),
    "empty_int64": lambda lib: lib.zeros(0, dtype=lib.int64),
    "empty_bool": lambda lib: lib.zeros(0, dtype=lib.bool),
    "empty_float64": lambda lib: lib.zeros(0, dtype=lib.float64),
    "empty_3d": lambda lib: lib.zeros(2, 0, 3),
    "empty_2d_int32": lambda lib: lib.zeros(2, 0, dtype=lib.int32),
    # nesting and line wrapping
    "2d": lambda lib: lib.arange(6.0).reshape(2, 3) / 7,
    "3d": lambda lib: lib.arange(24).reshape(2, 3, 4),
    "3d_float": lambda lib: lib.arange(24.0).reshape(2, 3, 4) - 11.5,
    "4d": lambda lib: lib.arange(16).reshape(2, 2, 2, 2),
    "one_by_one": lambda lib: lib.ones(1, 1),
    "wrap_floats": lambda lib: lib.arange(40.0) / 3,
    "wrap_ints": lambda lib: lib.arange(100),
    "wrap_2d": lambda lib: (lib.arange(60.0) / 7).reshape(2, 30),
    # summarisation over 1000 elements
    "summarized_ints": lambda lib: lib.arange(2000),
    "summarized_floats": lambda lib: lib.arange(2000.0) / 3,
    "summarized_2d": lambda lib: lib.arange(4000.0).reshape(40, 100),
    "summarized_3d": lambda lib: lib.arange(3000).reshape(10, 10, 30),
    "summarized_3d_floats": lambda lib: lib.arange(3000.0).reshape(3, 10, 100) / 11,
    "summarized_sci": lambda lib: lib.arange(2000.0) * 1e5,
    "summarized_bools": lambda lib: lib.arange(2000) % 2 == 0,
    "summarized_short_rows": lambda lib: lib.arange(2002).reshape(2, 1001),
    "summarized_int32": lambda lib: lib.arange(1500, dtype=lib.int32),
    # non-default dtypes
    "float64": lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float64),
    "float16": lambda lib: lib.tensor([1.5, 2.1], dtype=lib.float16),
    "float16_integer_valued": lambda lib: lib.tensor([1, 2], dtype=lib.float16),
    "float16_sci": lambda lib: lib.tensor([1e-4, 1000.0], dtype=lib.float16),
    # autograd state
    "requires_grad": lambda lib: lib.tensor([1.5, 2.0], requires_grad=True),
    "requires_grad_float64": lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True),
    "grad_fn_mul": lambda lib: lib.tensor([1.5, 2.0], requires_grad=True) * 2,
    "grad_fn_sum_float64": lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True).sum(),
    "empty_requires_grad": lambda lib: lib.zeros(2, 0, dtype=lib.float64, requires_grad=True),
    # suffixes that no longer fit on the last line start a new one
    "suffix_wraps": lambda lib: lib.arange(14, dtype=lib.int32) * 1000,
    "suffixes_wrap_requires_grad": lambda lib: (lib.arange(10, dtype=lib.float64) / 3).requires_grad_(),
    "suffixes_wrap_grad_fn": lambda lib: (lib.arange(10, dtype=lib.float64) / 3).requires_grad_() * 2,
    # complex: a formatter per part, the default complex dtype unsaid
    "complex": lambda lib: lib.tensor([1 + 2j, 3 - 1j]),
    "complex_parts_styles": lambda lib: lib.tensor([1.5 + 2j, -3 - 1e-5j]),
    "complex128_2d": lambda lib: lib.tensor([[1 + 2j, 3 - 1j]] * 3, dtype=lib.complex128),
    "complex_0d": lambda lib: lib.tensor(1 - 0j),
    "complex_nan": lambda lib: lib.tensor([NAN + 1j, 2j]),
    "complex_empty": lambda lib: lib.zeros(0, dtype=lib.complex64),
    "complex_wraps": lambda lib: (lib.arange(24.0) / 7 - 1j * lib.arange(24.0)).reshape(4, 6),
    "complex_summarized": lambda lib: lib.arange(2000.0) / 3 + 1j,
    "complex_requires_grad": lambda lib: lib.tensor([1 + 2j], requires_grad=True) * 2,
}


@pytest.mark.parametrize("name", list(REPR_CASES))
def test_repr_matches_torch(name):
    make = REPR_CASES[name]
    assert repr(make(ember)).replace("ember", "torch") == repr(make(torch))


@pytest.mark.parametrize("name", ["integer_valued", "four_decimals", "float64", "0d_float", "empty",
                                  "summarized_floats", "complex", "complex128_2d"])
def test_repr_under_float64_default_matches_torch(name):
    make = REPR_CASES[name]
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(make(ember)).replace("ember", "torch") == repr(make(torch))
        float32 = lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float32)  # now worth a dtype= suffix
        assert repr(float32(ember)).replace("ember", "torch") == repr(float32(torch))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_str_and_format_are_repr():
    x = ember.tensor([1.5, 2.0])
    assert str(x) == repr(x) == f"{x}"
    assert f"{ember.tensor(2.5):.2f}" == "2.50"


def test_repr_of_noncontiguous_tensor_matches_torch():
    data = np.arange(12.0).reshape(3, 4) / 3
    assert repr(ember.tensor(data).t()).replace("ember", "torch") == repr(torch.tensor(data).t())


# --- backward node names -----------------------------------------------------------

NODE_CASES = {
    "mul": lambda lib, x, y: x * y,
    "mul_scalar": lambda lib, x, y: x * 2,
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "div": lambda lib, x, y: x / y,
    "sum": lambda lib, x, y: x.sum(),
    "sum_dim": lambda lib, x, y: x.sum(0),
    "sum_dims_keepdim": lambda lib, x, y: x.sum((0, 1), keepdim=True),
    "mean": lambda lib, x, y: x.mean(),
    "mean_dim": lambda lib, x, y: x.mean(1),
    "exp": lambda lib, x, y: x.exp(),
    "matmul_2d": lambda lib, x, y: x @ y.t(),
    "matmul_1d": lambda lib, x, y: x[0] @ y[0],
    "matmul_2d_1d": lambda lib, x, y: x @ y[0],
    "mm": lambda lib, x, y: lib.mm(x, y.t()),
    "mv": lambda lib, x, y: lib.mv(x, y[0]),
    "dot": lambda lib, x, y: lib.dot(x[0], y[0]),
    "bmm": lambda lib, x, y: lib.bmm(x[None], y.t()[None]),
    "view": lambda lib, x, y: x.view(6),
    "transpose": lambda lib, x, y: x.transpose(0, 1),
    "t": lambda lib, x, y: x.t(),
    "T": lambda lib, x, y: x.T,
    "permute": lambda lib, x, y: x.permute(1, 0),
    "expand": lambda lib, x, y: x[:1].expand(4, 3),
    "neg": lambda lib, x, y: -x,
    "clone": lambda lib, x, y: x.clone(),
    "to_float64": lambda lib, x, y: x.to(lib.float64),
}


@pytest.mark.parametrize("name", list(NODE_CASES))
def test_grad_fn_names_match_torch(name):
    fn = NODE_CASES[name]
    data_x = np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(2, 3)
    data_y = data_x[::-1].copy()
    ex, ey = (ember.tensor(d, requires_grad=True) for d in (data_x, data_y))
    tx, ty = (torch.tensor(d, requires_grad=True) for d in (data_x, data_y))
    e_out, t_out = fn(ember, ex, ey), fn(torch, tx, ty)
    assert e_out.grad_fn.name() == type(t_out.grad_fn).__name__
    assert repr(e_out).replace("ember", "torch") == repr(t_out)


@pytest.mark.parametrize("name", ["sum_dim", "mean_dim", "matmul_1d", "matmul_2d_1d", "mm", "mv", "dot", "bmm", "t"])
def test_renamed_nodes_still_give_torch_gradients(name):
    from ember.testing import assert_parity, make_tensor

    fn = NODE_CASES[name]
    assert_parity(lambda lib, x, y: fn(lib, x, y), make_tensor((2, 3)), make_tensor((2, 3), seed=1))


@pytest.mark.parametrize("shape", [(2, 3), (1,), (), (0,), (2, 0, 3)])
def test_size_repr_matches_torch(shape):
    assert repr(ember.zeros(shape).shape) == repr(torch.zeros(shape).shape).replace("torch", "ember")
    assert repr(ember.Size(shape)) == f"ember.Size({list(shape)})"


OPTION_SETS = [dict(precision=2), dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
               dict(profile="full"), dict(threshold=5, edgeitems=1), dict(linewidth=30),
               dict(precision=6, sci_mode=True)]


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
def test_set_printoptions_prints_as_torch(options):
    values = [np.array([1.5, 2.25, 3.125]), np.array([1e-5, 1.0]), np.array([1.0, 2.0, 300000.0]),
              np.arange(30.0) / 7, np.arange(2000.0) / 3, np.array([[1.23456, 2], [3, 4]]), np.zeros(3)]
    try:
        for lib in (torch, ember):
            lib.set_printoptions(**options)
        for v in values:
            assert repr(ember.tensor(v, dtype=ember.float32)) == repr(torch.tensor(v, dtype=torch.float32))
    finally:
        for lib in (torch, ember):
            lib.set_printoptions(profile="default")


def test_printoptions_restores_what_was_set():
    from ember._tensor_str import get_printoptions, printoptions

    before = get_printoptions()
    with printoptions(precision=1, sci_mode=True):
        assert repr(ember.tensor([1.25])) == "tensor([1.2e+00])"
    assert get_printoptions() == before
    with pytest.raises(ValueError, match="profile must be one of"):
        ember.set_printoptions(profile="long")
