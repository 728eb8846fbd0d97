"""The functional forms of the dense layers against torch.nn.functional: linear (the
fused aten::linear op), bilinear, embedding and one_hot: values, input gradients,
errors, gradcheck and double backward."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close, assert_parity, make_tensor

FLOATS = ["float32", "float64"]


def _f(lib):
    return lib.nn.functional


# --- linear ---------------------------------------------------------------------------

LINEAR_SHAPES = [(3,), (5, 3), (2, 4, 3), (2, 1, 4, 3), (0, 3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LINEAR_SHAPES)
def test_linear(dtype, shape):
    x, w, b = make_tensor(shape, dtype), make_tensor((4, 3), dtype, seed=1), make_tensor((4,), dtype, seed=2)
    assert_parity(lambda lib, x, w, b: _f(lib).linear(x, w, b), x, w, b, atol=1e-5)
    assert_parity(lambda lib, x, w: _f(lib).linear(x, w), x, w, atol=1e-5)


def test_linear_noncontiguous():
    x, w, b = make_tensor((2, 5, 3)), make_tensor((4, 3), seed=1), make_tensor((4,), seed=2)
    assert_parity(lambda lib, x, w, b: _f(lib).linear(x, w, b), x, w, b, noncontiguous=True, atol=1e-5)
    # a transposed input and weight (views with unusual strides)
    assert_parity(lambda lib, x, w: _f(lib).linear(x.transpose(0, 1), w.t()), make_tensor((3, 2, 6)),
                  make_tensor((6, 4), seed=1), atol=1e-5)


@pytest.mark.parametrize("bias_shape", [(), (1,), (2, 4), (1, 4)])
def test_linear_broadcast_bias(bias_shape):
    x, w, b = make_tensor((2, 3)), make_tensor((4, 3), seed=1), make_tensor(bias_shape, seed=2)
    assert_parity(lambda lib, x, w, b: _f(lib).linear(x, w, b), x, w, b, atol=1e-5)


def test_linear_vector_weight():
    x, w = make_tensor((2, 3)), make_tensor((3,), seed=1)
    assert_parity(lambda lib, x, w: _f(lib).linear(x, w), x, w, atol=1e-5)
    assert_parity(lambda lib, x, w, b: _f(lib).linear(x, w, b), x, w, make_tensor((), seed=2), atol=1e-5)


@pytest.mark.parametrize("x_shape, w_shape, b_shape, dtypes", [
    ((2, 3), (4, 5), None, None),
    ((2, 7, 3), (4, 5), None, None),
    ((), (4, 3), None, None),
    ((2, 3), (2, 4, 3), None, None),
    ((2, 3), (4, 3), (5,), None),
    ((2, 3), (4, 3), (3, 4), None),
    ((2, 3), (4, 3), None, ("float32", "float64", None)),
    ((2, 3), (4, 3), (4,), ("float32", "float32", "float64")),
])
def test_linear_errors(x_shape, w_shape, b_shape, dtypes):
    dx, dw, db = dtypes or ("float32",) * 3
    args = [make_tensor(x_shape, dx), make_tensor(w_shape, dw, seed=1)]
    if b_shape is not None:
        args.append(make_tensor(b_shape, db, seed=2))
    assert_parity(lambda lib, *a: _f(lib).linear(*a), *args)


def test_linear_error_names_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(14x3 and 5x4\)"):
        ember.nn.functional.linear(ember.ones(2, 7, 3), ember.ones(4, 5))


def test_linear_is_one_node():
    x = ember.ones(2, 3, requires_grad=True)
    y = ember.nn.functional.linear(x, ember.ones(4, 3, requires_grad=True), ember.ones(4, requires_grad=True))
    assert y.grad_fn.name() == "LinearBackward0"
    assert len(y.grad_fn.next_functions) == 3


def test_linear_gradcheck():
    x = ember.tensor(make_tensor((2, 3, 4), "float64")).requires_grad_()
    w = ember.tensor(make_tensor((5, 4), "float64", seed=1)).requires_grad_()
    b = ember.tensor(make_tensor((5,), "float64", seed=2)).requires_grad_()
    linear = ember.nn.functional.linear
    assert gradcheck(linear, (x, w, b))
    assert gradgradcheck(linear, (x, w, b))
    assert gradcheck(lambda x, w: linear(x, w), (x[0, 0], w))  # 1-d input


def test_linear_double_backward_matches_torch():
    arrays = [make_tensor((3, 4), "float64"), make_tensor((5, 4), "float64", seed=1),
              make_tensor((5,), "float64", seed=2)]
    g = make_tensor((3, 5), "float64", seed=3)
    results = {}
    for lib in (ember, torch):
        x, w, b = [lib.tensor(a).requires_grad_() for a in arrays]
        out = lib.nn.functional.linear(x, w, b)
        gx, gw = lib.autograd.grad(out, (x, w), lib.tensor(g), create_graph=True)
        # a scalar of the first gradients whose gradient reaches x, w and b again
        second = lib.autograd.grad((gx * gx).sum() + (gw * gw.sin()).sum(), (x, w, b), allow_unused=True)
        results[lib] = (gx, gw) + tuple(second)
    for a, e in zip(results[ember], results[torch]):
        if e is None:
            assert a is None or not bool(a.ne(0).any())
        else:
            assert_close(a, e)


# --- bilinear -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_bilinear(dtype, batch):
    x1, x2 = make_tensor(batch + (3,), dtype), make_tensor(batch + (4,), dtype, seed=1)
    w, b = make_tensor((2, 3, 4), dtype, seed=2), make_tensor((2,), dtype, seed=3)
    assert_parity(lambda lib, x1, x2, w, b: _f(lib).bilinear(x1, x2, w, b), x1, x2, w, b, atol=1e-5)
    assert_parity(lambda lib, x1, x2, w: _f(lib).bilinear(x1, x2, w), x1, x2, w, atol=1e-5)


@pytest.mark.parametrize("s1, s2, sw, sb", [
    ((2, 3), (4,), (5, 3, 4), None),
    ((2, 3), (3, 4), (5, 3, 4), None),
    ((2, 3), (2, 4), (5, 3), None),
    ((2, 3), (2, 4), (5, 2, 4), None),
    ((2, 3), (2, 4), (5, 3, 2), None),
    ((2, 3), (2, 4), (5, 3, 4), (4,)),
    ((2, 3), (2, 4), (5, 3, 4), (2, 5)),
])
def test_bilinear_errors(s1, s2, sw, sb):
    args = [make_tensor(s1), make_tensor(s2, seed=1), make_tensor(sw, seed=2)]
    if sb is not None:
        args.append(make_tensor(sb, seed=3))
    assert_parity(lambda lib, *a: _f(lib).bilinear(*a), *args)


def test_bilinear_dtype_error():
    assert_parity(lambda lib, a, b, w: _f(lib).bilinear(a, b, w), make_tensor((2, 3)),
                  make_tensor((2, 4), "float64"), make_tensor((5, 3, 4)))


def test_bilinear_gradcheck():
    arrays = [make_tensor((2, 3), "float64"), make_tensor((2, 4), "float64", seed=1),
              make_tensor((2, 3, 4), "float64", seed=2), make_tensor((2,), "float64", seed=3)]
    inputs = tuple(ember.tensor(a).requires_grad_() for a in arrays)
    assert gradcheck(ember.nn.functional.bilinear, inputs)
    assert gradgradcheck(ember.nn.functional.bilinear, inputs)


# --- embedding ------------------------------------------------------------------------


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding(index_dtype, kwargs):
    idx = np.array([[1, 1, 2, 0], [4, 1, 3, 4]], dtype=index_dtype)
    w = make_tensor((5, 3), "float64")
    assert_parity(lambda lib, w, i: _f(lib).embedding(i, w, **kwargs), w, idx)


def test_embedding_index_shapes():
    w = make_tensor((5, 3))
    for idx in [np.array(2), np.array([], dtype=np.int64), np.zeros((2, 0, 3), dtype=np.int64),
                np.array([[[4]]])]:
        assert_parity(lambda lib, w, i: _f(lib).embedding(i, w), w, idx)


@pytest.mark.parametrize("idx, w_shape, kwargs", [
    (np.array([1.0, 2.0]), (5, 3), {}),
    (np.array([1, 2], dtype=np.int16), (5, 3), {}),
    (np.array([1, 5]), (5, 3), {}),
    (np.array([1, -1]), (5, 3), {}),
    (np.array([1, 2]), (5,), {}),
    (np.array([1, 2]), (5, 2, 2), {}),
    (np.array([1, 2]), (5, 3), {"padding_idx": 5}),
    (np.array([1, 2]), (5, 3), {"padding_idx": -6}),
])
def test_embedding_errors(idx, w_shape, kwargs):
    assert_parity(lambda lib, w, i: _f(lib).embedding(i, w, **kwargs), make_tensor(w_shape), idx)


@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (2.0, 1.0), (0.5, 3.0)])
def test_embedding_max_norm_renormalises_in_place(max_norm, norm_type):
    w = make_tensor((6, 3), "float64") * 2
    idx = np.array([[1, 1, 2], [5, 0, 1]])
    e_w, t_w = ember.tensor(w), torch.from_numpy(w.copy())
    e_out = ember.nn.functional.embedding(ember.tensor(idx), e_w, max_norm=max_norm, norm_type=norm_type)
    t_out = torch.nn.functional.embedding(torch.from_numpy(idx), t_w, max_norm=max_norm, norm_type=norm_type)
    assert_close(e_out, t_out)
    assert_close(e_w, t_w)  # rows 0, 1, 2, 5 rescaled, rows 3 and 4 untouched
    assert not np.allclose(e_w.numpy(), w)


def test_embedding_gradcheck():
    w = ember.tensor(make_tensor((5, 3), "float64")).requires_grad_()
    idx = ember.tensor([[1, 1, 2], [4, 0, 1]])
    assert gradcheck(lambda w: ember.nn.functional.embedding(idx, w), (w,))
    # padding_idx and scale_grad_by_freq make the backward deliberately differ from the
    # Jacobian (as in torch); it is still linear in the gradient, which gradgradcheck checks.
    for kwargs in ({}, {"padding_idx": 1, "scale_grad_by_freq": True}):
        def fn(w, kwargs=kwargs):
            return ember.nn.functional.embedding(idx, w, **kwargs)
        assert gradgradcheck(fn, (w,))


def test_embedding_sparse_gives_a_sparse_gradient():
    # values and patterns against torch: tests/core/native/sparse/test_sparse_math.py
    w = ember.ones(2, 2, requires_grad=True)
    ember.nn.functional.embedding(ember.tensor([0]), w, sparse=True).sum().backward()
    assert w.grad.layout is ember.sparse_coo and w.grad._indices().tolist() == [[0]]


# --- one_hot --------------------------------------------------------------------------


@pytest.mark.parametrize("values, num_classes", [
    ([0, 2, 1], -1), ([0, 2, 1], 5), ([[0, 2], [1, 1]], -1), (3, -1), (3, 4), ([], 3), ([[]], 2),
])
def test_one_hot(values, num_classes):
    idx = np.array(values, dtype=np.int64)
    out, expected = assert_parity(lambda lib, i: _f(lib).one_hot(i, num_classes), idx)
    assert out.dtype is ember.int64


@pytest.mark.parametrize("values, dtype, num_classes", [
    ([1, 2], "int64", 2), ([1, -2], "int64", -1), ([1.0, 2.0], "float32", -1), ([1, 2], "int32", -1),
    ([], "int64", -1), ([], "int64", 0), ([1, 2], "int64", -2),
])
def test_one_hot_errors(values, dtype, num_classes):
    assert_parity(lambda lib, i: _f(lib).one_hot(i, num_classes), np.array(values, dtype=dtype))
