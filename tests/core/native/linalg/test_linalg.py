"""Matrix products and einsum (ember/native/linalg/products.py) against PyTorch: every
matmul rank combination with broadcasting, mm/mv/bmm/dot/outer/addmm/addmv/baddbmm,
einsum equations of every kind, gradients, gradcheck, and the shape and dtype errors."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
# (shape of a, shape of b) for a @ b: every 1-d/2-d/N-d combination, broadcast batches, empty.
MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
                 ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (5, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 4)),
                 ((0,), (0,)), ((2, 0, 3), (3, 4))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
def test_matmul(dtype, shape_a, shape_b):
    a, b = make_tensor(shape_a, dtype), make_tensor(shape_b, dtype, seed=1)
    assert_parity(lambda lib, a, b: lib.matmul(a, b), a, b, atol=1e-5)
    assert_parity(lambda lib, a, b: a @ b, a, b, noncontiguous=True, atol=1e-5)


def test_matmul_of_transposed_operands():
    a, b = make_tensor((4, 3)), make_tensor((5, 4), seed=1)
    assert_parity(lambda lib, a, b: a.t() @ b.t(), a, b, atol=1e-5)
    assert_parity(lambda lib, a, b: a.mT.matmul(b.mT), make_tensor((2, 4, 3)), make_tensor((2, 5, 4)), atol=1e-5)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (3, 4)), ((3,), (3,)), ((5, 2, 3), (3,))])
def test_matmul_integers(dtype, shape_a, shape_b):
    assert_parity(lambda lib, a, b: a @ b, make_tensor(shape_a, dtype), make_tensor(shape_b, dtype, seed=1))


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (4, 2)), ((3,), (4,)), ((3,), (4, 2)), ((2, 3), (4,)),
                                              ((2, 2, 3), (4,)), ((3,), (2, 4, 2)), ((2, 3, 4), (5, 4, 2)),
                                              ((), (3,)), ((3,), ())])
def test_matmul_shape_errors(shape_a, shape_b):
    assert_parity(lambda lib, a, b: a @ b, make_tensor(shape_a), make_tensor(shape_b))


def test_matmul_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)"):
        ember.ones(2, 3) @ ember.ones(4, 2)


@pytest.mark.parametrize("fn", [lambda lib, a, b: a @ b, lambda lib, a, b: lib.mm(a, b)])
def test_matmul_dtype_errors(fn):
    assert_parity(fn, make_tensor((2, 3)), make_tensor((3, 2), "float64"))
    assert_parity(fn, make_tensor((2, 3), "bool"), make_tensor((3, 2), "bool"))


@pytest.mark.parametrize("name, shape_a, shape_b", [("mm", (2, 3), (3, 4)), ("mm", (2, 3), (3,)),
                                                    ("mm", (3,), (3, 4)), ("mm", (2, 3), (4, 2)),
                                                    ("mv", (2, 3), (3,)), ("mv", (2, 3), (4,)), ("mv", (2, 3), (3, 1)),
                                                    ("bmm", (2, 3, 4), (2, 4, 5)), ("bmm", (2, 3, 4), (3, 4, 5)),
                                                    ("bmm", (2, 3, 4), (2, 5, 5)), ("bmm", (3, 4), (3, 4)),
                                                    ("dot", (3,), (3,)), ("dot", (3,), (4,)), ("dot", (2, 3), (3,)),
                                                    ("outer", (3,), (4,)), ("outer", (3,), (2, 2)),
                                                    ("inner", (3,), (3,)), ("vdot", (3,), (3,))])
def test_products(name, shape_a, shape_b):
    a, b = make_tensor(shape_a), make_tensor(shape_b, seed=1)
    assert_parity(lambda lib, a, b: getattr(lib, name)(a, b), a, b, atol=1e-5)
    assert_parity(lambda lib, a, b: getattr(a, name)(b), a, b, noncontiguous=True, atol=1e-5)


def test_dot_and_outer_dtypes():
    assert_parity(lambda lib, a, b: lib.dot(a, b), make_tensor((3,)), make_tensor((3,), "float64"))
    assert_parity(lambda lib, a, b: lib.outer(a, b), make_tensor((3,)), make_tensor((2,), "float64"))
    assert_parity(lambda lib, a, b: lib.outer(a, b), make_tensor((3,), "int64"), make_tensor((2,)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bias_shape", [(2, 4), (4,), (1, 4), (2, 1), (), (3, 4), (2,)])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1), (1, -1.5)])
def test_addmm(dtype, bias_shape, beta, alpha):
    bias, a, b = make_tensor(bias_shape, dtype, seed=2), make_tensor((2, 3), dtype), make_tensor((3, 4), dtype)
    assert_parity(lambda lib, c, a, b: lib.addmm(c, a, b, beta=beta, alpha=alpha), bias, a, b, atol=1e-5)
    assert_parity(lambda lib, c, a, b: c.addmm(a, b, beta=beta, alpha=alpha), bias, a, b, atol=1e-5,
                  noncontiguous=True)


def test_addmm_with_beta_zero_ignores_nan():
    bias = np.full((2, 4), np.nan, dtype="float32")
    assert_parity(lambda lib, c, a, b: lib.addmm(c, a, b, beta=0), bias, make_tensor((2, 3)), make_tensor((3, 4)))


def test_addmm_errors():
    assert_parity(lambda lib, c, a, b: lib.addmm(c, a, b), make_tensor((2, 2)), make_tensor((2, 3)),
                  make_tensor((4, 2)))
    assert_parity(lambda lib, c, a, b: lib.addmm(c, a, b), make_tensor((2, 2), "float64"), make_tensor((2, 3)),
                  make_tensor((3, 2)))
    assert_parity(lambda lib, c, a, b: lib.addmm(c, a, b), make_tensor((2, 2)), make_tensor((2, 3, 1)),
                  make_tensor((3, 2)))


@pytest.mark.parametrize("bias_shape", [(2,), (), (1,), (3,)])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmv(bias_shape, beta, alpha):
    bias, a, v = make_tensor(bias_shape, seed=2), make_tensor((2, 3)), make_tensor((3,), seed=1)
    assert_parity(lambda lib, c, a, v: lib.addmv(c, a, v, beta=beta, alpha=alpha), bias, a, v, atol=1e-5)


@pytest.mark.parametrize("bias_shape", [(2, 3, 5), (3, 5), (5,), (1, 3, 1), (2, 2, 5)])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_baddbmm(bias_shape, beta, alpha):
    bias, a, b = make_tensor(bias_shape, seed=2), make_tensor((2, 3, 4)), make_tensor((2, 4, 5), seed=1)
    assert_parity(lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=beta, alpha=alpha), bias, a, b, atol=1e-5)


@pytest.mark.parametrize("shape_a, shape_b", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                              ((2, 2, 3), (3, 4)), ((3,), (2, 3, 2)), ((2, 1, 2, 3), (3, 3, 2))])
def test_matmul_gradcheck(shape_a, shape_b):
    a = ember.tensor(make_tensor(shape_a, "float64")).requires_grad_()
    b = ember.tensor(make_tensor(shape_b, "float64", seed=1)).requires_grad_()
    assert gradcheck(lambda a, b: a @ b, (a, b))


@pytest.mark.parametrize("name, shape_a, shape_b", [("mm", (2, 3), (3, 4)), ("mv", (2, 3), (3,)),
                                                    ("bmm", (2, 3, 4), (2, 4, 2)), ("dot", (3,), (3,)),
                                                    ("outer", (3,), (2,))])
def test_products_gradcheck(name, shape_a, shape_b):
    a = ember.tensor(make_tensor(shape_a, "float64")).requires_grad_()
    b = ember.tensor(make_tensor(shape_b, "float64", seed=1)).requires_grad_()
    assert gradcheck(getattr(ember, name), (a, b))


def test_matmul_gradgradcheck():
    a = ember.tensor(make_tensor((2, 3), "float64")).requires_grad_()
    b = ember.tensor(make_tensor((3,), "float64", seed=1)).requires_grad_()
    assert gradgradcheck(lambda a, b: a @ b, (a, b))


@pytest.mark.parametrize("name", ["addmm", "baddbmm", "addmv"])
def test_fused_products_gradcheck(name):
    shapes = {"addmm": [(4,), (2, 3), (3, 4)], "baddbmm": [(3, 4), (2, 3, 2), (2, 2, 4)],
              "addmv": [(), (2, 3), (3,)]}[name]
    inputs = [ember.tensor(make_tensor(s, "float64", seed=i)).requires_grad_() for i, s in enumerate(shapes)]
    assert gradcheck(lambda c, a, b: getattr(ember, name)(c, a, b, beta=0.5, alpha=2.0), tuple(inputs))
    assert gradgradcheck(lambda c, a, b: getattr(ember, name)(c, a, b, beta=0.5, alpha=2.0), tuple(inputs))


def test_matmul_grad_fn_names_follow_pytorch():
    a, v = ember.ones(2, 3, requires_grad=True), ember.ones(3, requires_grad=True)
    assert type(a @ a.t()).__name__ == "Tensor"
    assert (a @ a.t()).grad_fn.name() == "MmBackward0"
    assert (a @ v).grad_fn.name() == "MvBackward0"
    assert (v @ v).grad_fn.name() == "DotBackward0"


# --- einsum ---------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),              # implicit output
    ("ba", [(2, 3)]),                          # implicit output is sorted: a transpose
    ("ij->ji", [(2, 3)]),
    ("ii->", [(3, 3)]),                        # trace
    ("ii->i", [(3, 3)]),                       # diagonal
    ("ii", [(3, 3)]),
    ("iij->ij", [(2, 2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->i", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]),
    ("...ij,...jk->...ik", [(2, 5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk", [(2, 3), (4, 3, 1)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("b...,b->...", [(2, 3, 4), (2,)]),
    ("...->", [(2, 3)]),
    ("ij...->j", [(2, 3, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,ij,j->", [(2,), (2, 3), (3,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),  # a size-1 letter broadcasts
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("i,i->", [(0,), (0,)]),
    ("->", [()]),
    (",ij->ij", [(), (2, 3)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("equation, shapes", EINSUM_CASES)
def test_einsum(dtype, equation, shapes):
    inputs = [make_tensor(s, dtype, seed=i) for i, s in enumerate(shapes)]
    assert_parity(lambda lib, *xs: lib.einsum(equation, *xs), *inputs, atol=1e-5)
    assert_parity(lambda lib, *xs: lib.einsum(equation, list(xs)), *inputs, noncontiguous=True, atol=1e-5)


@pytest.mark.parametrize("equation, shapes", [c for c in EINSUM_CASES if 0 not in sum(c[1], ())])
def test_einsum_gradcheck(equation, shapes):
    inputs = tuple(ember.tensor(make_tensor(s, "float64", seed=i)).requires_grad_() for i, s in enumerate(shapes))
    assert gradcheck(lambda *xs: ember.einsum(equation, *xs), inputs)


@pytest.mark.parametrize("equation, shapes", [("ij,jk->ik", [(2, 3), (3, 2)]), ("ii->i", [(3, 3)]),
                                              ("ij->i", [(2, 3)])])
def test_einsum_gradgradcheck(equation, shapes):
    inputs = tuple(ember.tensor(make_tensor(s, "float64", seed=i)).requires_grad_() for i, s in enumerate(shapes))
    assert gradgradcheck(lambda *xs: ember.einsum(equation, *xs), inputs)


def test_einsum_integers():
    assert_parity(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), make_tensor((2, 3), "int64"),
                  make_tensor((3, 4), "int64"))


def test_einsum_result_does_not_share_memory_with_an_operand():
    x = ember.ones(2, 3)
    y = ember.einsum("ij->ji", x)
    y.add_(1)
    assert x.sum().item() == 6.0


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (4, 5)]),      # sizes do not match
    ("ij,jk->ik", [(2, 3)]),              # too few operands
    ("i,i", [(2,), (2,), (2,)]),          # too many
    ("ij->ik", [(2, 3)]),                 # output letter from nowhere
    ("ijk->i", [(2, 3)]),                 # too many subscripts
    ("...ij->...ji", [(3,)]),
    ("ij->ii", [(2, 3)]),                 # repeated output letter
    ("ii->i", [(2, 3)]),                  # repeated letter, different sizes
    ("i1->i", [(2, 3)]),                  # invalid character
])
def test_einsum_errors(equation, shapes):
    inputs = [make_tensor(s, seed=i) for i, s in enumerate(shapes)]
    assert_parity(lambda lib, *xs: lib.einsum(equation, *xs), *inputs)


def test_einsum_dtype_mismatch_raises():
    assert_parity(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), make_tensor((2, 3)), make_tensor((3, 4), "float64"))


def test_einsum_is_no_tensor_method():
    assert not hasattr(ember.ones(2), "einsum")


@pytest.mark.parametrize("shape_a, shape_b", [((), (2, 3)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (4, 3)),
                                              ((2, 1, 3), (3,)), ((2, 0), (3, 0)), ((2, 3), (2, 4))])
def test_inner_over_the_last_dims(shape_a, shape_b):
    assert_parity(lambda lib, a, b: lib.inner(a, b), make_tensor(shape_a, "float64"),
                  make_tensor(shape_b, "float64", seed=1))


def test_inner_dtype_mismatch_raises():
    assert_parity(lambda lib, a, b: a.inner(b), make_tensor((3,)), make_tensor((3,), "float64"))


@pytest.mark.parametrize("name", ["addmm", "addmv", "baddbmm"])
def test_fused_products_of_integers_truncate_float_scalars(name):
    # PyTorch casts beta and alpha to the integer dtype: 1.7 acts as 1, 2.6 as 2.
    shapes = {"addmm": [(2, 4), (2, 3), (3, 4)], "addmv": [(2,), (2, 3), (3,)],
              "baddbmm": [(2, 2, 4), (2, 2, 3), (2, 3, 4)]}[name]
    inputs = [make_tensor(shape, "int64", seed=i) for i, shape in enumerate(shapes)]
    assert_parity(lambda lib, *xs: getattr(lib, name)(*xs, beta=1.7, alpha=2.6), *inputs)


@pytest.mark.parametrize("name", ["addmm", "addmv", "baddbmm"])
def test_fused_products_in_place(name):
    shapes = {"addmm": [(2, 4), (2, 3), (3, 4)], "addmv": [(2,), (2, 3), (3,)],
              "baddbmm": [(2, 2, 4), (2, 2, 3), (2, 3, 4)]}[name]
    inputs = [make_tensor(shape, "float32", seed=i) for i, shape in enumerate(shapes)]
    results = []
    for lib in (ember, torch):
        target, *operands = (lib.tensor(x) for x in inputs)
        out = getattr(target, name + "_")(*operands, beta=0.5, alpha=2.0)
        assert out is target
        results.append(target.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("self_shape", [(1,), (10,), (1, 10), (), (5, 10)])
def test_addbmm_inplace_resizes_a_broadcastable_self(self_shape):
    # torch's addbmm_ writes the (5, 10) product into a self that broadcasts to it. (A (5, 1)
    # self is left out: torch reads it through a view of the storage it is overwriting.)
    a, b = make_tensor((3, 5, 4), "float64", seed=1), make_tensor((3, 4, 10), "float64", seed=2)
    out, expected = assert_parity(lambda lib, c, a, b: c.clone().addbmm_(a, b, beta=0.5, alpha=2),
                                  make_tensor(self_shape, "float64"), a, b, grad=False)
    assert tuple(out.shape) == tuple(expected.shape) == (5, 10)


def test_addbmm_inplace_refuses_a_self_that_does_not_broadcast():
    assert_parity(lambda lib, c, a, b: c.addbmm_(a, b), make_tensor((2, 10), "float64"),
                  make_tensor((3, 5, 4), "float64"), make_tensor((3, 4, 10), "float64"), grad=False)
