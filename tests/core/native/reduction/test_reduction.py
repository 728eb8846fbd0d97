"""Reductions (ember/native/reduction/reduction.py, extremes.py) against PyTorch: values, dtypes, shapes,
gradients, ties, empty and 0-d inputs, dims given every way, and the errors."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
# (shape, dim): dim as None, int, negative int, tuple, empty tuple, and 0-d with 0/-1.
SHAPE_DIMS = [((2, 3, 4), None), ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0)),
              ((2, 3, 4), ()), ((5,), 0), ((), None), ((), 0), ((), -1), ((2, 0, 3), 1), ((2, 0, 3), 2),
              ((0,), None)]


def _double(shape, seed=0, **kw):
    return ember.tensor(make_tensor(shape, "float64", seed=seed, **kw)).requires_grad_()


# --- sum, mean, prod, var, std ------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", SHAPE_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean(dtype, shape, dim, keepdim):
    x = make_tensor(shape, dtype)
    if dim is None:
        assert_parity(lambda lib, x: lib.sum(x), x)
        assert_parity(lambda lib, x: x.mean(), x)
    else:
        assert_parity(lambda lib, x: x.sum(dim, keepdim=keepdim), x)
        assert_parity(lambda lib, x: lib.mean(x, dim, keepdim), x)


@pytest.mark.parametrize("shape, dim", [((2, 3, 4), 1), ((2, 3, 4), (0, 2)), ((3, 4), None)])
def test_sum_mean_noncontiguous(shape, dim):
    x = make_tensor(shape)
    assert_parity(lambda lib, x: x.sum(dim) if dim is not None else x.sum(), x, noncontiguous=True)
    assert_parity(lambda lib, x: x.mean(dim) if dim is not None else x.mean(), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("dim", [None, 0, (0, 1)])
def test_integer_sum_and_prod_accumulate_in_int64(dtype, dim):
    x = make_tensor((3, 4), dtype, low=-2, high=2)
    assert_parity(lambda lib, x: x.sum() if dim is None else x.sum(dim), x)
    assert_parity(lambda lib, x: x.prod() if dim is None else x.prod(dim if isinstance(dim, int) else 0), x)
    assert_parity(lambda lib, x: lib.cumsum(x, 1), x)


@pytest.mark.parametrize("dtype", ["int32", "bool", "float32"])
@pytest.mark.parametrize("to", ["float64", "int16", "float32"])
def test_dtype_argument(dtype, to):
    x = make_tensor((3, 4), dtype)
    grad = to.startswith("float")  # PyTorch refuses integer outputs of inputs that require grad
    assert_parity(lambda lib, x: x.sum(1, dtype=getattr(lib, to)), x, grad=grad)
    assert_parity(lambda lib, x: lib.sum(x, dtype=getattr(lib, to)), x, grad=grad)
    assert_parity(lambda lib, x: x.prod(1, dtype=getattr(lib, to)), x, grad=grad)
    assert_parity(lambda lib, x: x.mean(0, dtype=getattr(lib, to)), x, grad=grad)
    assert_parity(lambda lib, x: x.cumsum(0, dtype=getattr(lib, to)), x, grad=grad)
    assert_parity(lambda lib, x: x.cumprod(1, dtype=getattr(lib, to)), x, grad=grad)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_mean_of_integers_raises(dtype):
    x = make_tensor((3,), dtype)
    assert_parity(lambda lib, x: x.mean(), x)
    with pytest.raises(RuntimeError, match="Got: (Int|Long|Bool)"):
        ember.tensor(x).mean()


def test_empty_reductions():
    for shape in [(0,), (2, 0)]:
        x = make_tensor(shape)
        for name in ["sum", "mean", "prod", "logsumexp", "norm", "all", "any", "count_nonzero"]:
            if name == "logsumexp":
                assert_parity(lambda lib, x: x.logsumexp(-1), x)
            else:
                assert_parity(lambda lib, x: getattr(x, name)(), x)
            assert_parity(lambda lib, x: getattr(x, name)(-1), x)
        # max/amin/argmax of no elements: the same error types as PyTorch.
        for name in ["max", "min", "amax", "amin", "argmax", "argmin"]:
            assert_parity(lambda lib, x: getattr(x, name)(), x)
            assert_parity(lambda lib, x: getattr(x, name)(-1), x)
    assert_parity(lambda lib, x: (x.max(0), x.amin(0), x.argmax(0)), make_tensor((2, 0)))


@pytest.mark.parametrize("zeros", [0, 1, 2, 4])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_prod_gradient_is_exact_with_zeros(zeros, dim):
    x = make_tensor((3, 4), "float64", exclude_zero=True)
    x.reshape(-1)[[1, 7, 5, 6][:zeros]] = 0.0  # row 1 gets up to three zeros, col 1 two
    assert_parity(lambda lib, x: x.prod() if dim is None else x.prod(dim), x)
    t = ember.tensor(x).requires_grad_()
    assert gradcheck(lambda t: t.prod() if dim is None else t.prod(dim), (t,))


INF, NAN = float("inf"), float("nan")


def first_and_second(reduce):
    # The gradient of reduce(x).sum() kept differentiable, and the gradient of its sum.
    def run(lib, x):
        x = x.requires_grad_()  # (grad=False: assert_parity leaves the input plain)
        (g,) = lib.autograd.grad(reduce(lib, x).sum(), x, create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)
    return run


@pytest.mark.parametrize("values", [[INF, 2.0, 3.0], [NAN, 2.0, 3.0], [-INF, 0.5, 4.0], [2.0, 0.5, 4.0],
                                    [INF, 0.0, 3.0], [0.0, 2.0, 3.0], [0.0, 0.0, 3.0]], ids=str)
@pytest.mark.parametrize("dim", [None, 0])
def test_prod_gradients_with_inf_and_nan(values, dim):
    # Without zeros torch's gradient is prod / x (inf / inf is NaN where x is inf).
    x = np.array(values)
    reduce = (lambda lib, t: t.prod()) if dim is None else (lambda lib, t: t.prod(dim))
    if 0.0 in values and INF in values:  # ember's second derivative differs there (first only)
        assert_parity(reduce, x)
    else:
        assert_parity(first_and_second(reduce), x, grad=False)


# A backward's own layout (what autograd.grad returns, before any .grad contract):
# PyTorch's prod and norm backward multiply a tensor made from the input by the spread
# gradient, so their gradients follow the gradient's order, then the input's.
LAYOUTS = {
    "row_major": lambda lib, x: x,
    "channels_last": lambda lib, x: x.contiguous(memory_format=lib.channels_last),
    "permuted": lambda lib, x: x.permute(2, 0, 3, 1),
}
LAYOUT_REDUCTIONS = {
    "prod": lambda x: x.prod(), "prod(0)": lambda x: x.prod(0), "prod(1, keepdim)": lambda x: x.prod(1, True),
    "prod(-1)": lambda x: x.prod(-1), "norm": lambda x: x.norm(), "norm(dim=0)": lambda x: x.norm(dim=0),
    "norm(dim=1, keepdim)": lambda x: x.norm(dim=1, keepdim=True), "norm(dim=2)": lambda x: x.norm(dim=2),
    "norm(dim=(0, 2))": lambda x: x.norm(dim=(0, 2)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(LAYOUT_REDUCTIONS))
def test_prod_and_norm_gradients_are_laid_out_as_torch(dtype, layout, name):
    import torch

    values = make_tensor((2, 3, 4, 5), dtype, exclude_zero=True)
    results = []
    for lib in (ember, torch):
        x = LAYOUTS[layout](lib, lib.tensor(values)).detach().requires_grad_()
        out = LAYOUT_REDUCTIONS[name](x)
        seed = lib.tensor(make_tensor(tuple(out.shape), dtype, seed=1))
        (grad,) = lib.autograd.grad(out, x, seed)
        results.append((grad.stride(), grad.detach().numpy()))
    (ember_strides, ember_grad), (torch_strides, torch_grad) = results
    assert ember_strides == torch_strides
    np.testing.assert_allclose(ember_grad, torch_grad, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("shape, dim", [((), None), ((), 0), ((5,), 0), ((0,), 0), ((2, 0), 1)])
def test_prod_shapes(shape, dim):
    assert_parity(lambda lib, x: x.prod() if dim is None else x.prod(dim, keepdim=True), make_tensor(shape))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", [sd for sd in SHAPE_DIMS[:8] if sd[1] != ()])
@pytest.mark.parametrize("correction", [None, 0, 1, 2])
def test_var_std(dtype, shape, dim, correction):
    x = make_tensor(shape, dtype)
    kw = {} if correction is None else {"correction": correction}
    assert_parity(lambda lib, x: lib.var(x, dim, keepdim=True, **kw), x, atol=1e-5)
    assert_parity(lambda lib, x: x.std(dim, **kw), x, atol=1e-5)
    assert_parity(lambda lib, x: lib.var_mean(x, dim, **kw), x, atol=1e-5)
    assert_parity(lambda lib, x: lib.std_mean(x, dim, keepdim=True, **kw), x, atol=1e-5)


@pytest.mark.parametrize("unbiased", [True, False])
def test_var_unbiased(unbiased):
    x = make_tensor((3, 4))
    assert_parity(lambda lib, x: x.var(1, unbiased), x)
    assert_parity(lambda lib, x: x.var(unbiased), x)
    assert_parity(lambda lib, x: lib.std(x, 0, unbiased=unbiased, keepdim=True), x)


def test_std_of_constant_values_has_zero_gradient():
    x = np.full((2, 3), 1.5, dtype="float32")
    assert_parity(lambda lib, x: x.std(1), x)
    assert_parity(lambda lib, x: lib.std(x, correction=0), x)


def test_var_of_integers_raises():
    assert_parity(lambda lib, x: x.var(), make_tensor((3,), "int64"))


# --- max, min, amax, amin, argmax, argmin ---------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + ["int32", "bool"])
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("shape, dim", [((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((5,), 0), ((), 0), ((), -1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_with_dim_return_values_and_indices(dtype, name, shape, dim, keepdim):
    x = make_tensor(shape, dtype, low=-2, high=2)  # small integers: many ties
    e, t = assert_parity(lambda lib, x: getattr(x, name)(dim, keepdim), x)
    assert type(e).__name__ == name and e.values is e[0] and e.indices is e[1]
    e, t = assert_parity(lambda lib, x: getattr(lib, name)(x, dim=dim, keepdim=keepdim), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
@pytest.mark.parametrize("name", ["amax", "amin", "argmax", "argmin", "max", "min"])
@pytest.mark.parametrize("shape, dim", [((3, 4), None), ((3, 4), 1), ((2, 3, 4), (0, 2)), ((), None), ((), 0)])
def test_extremes(dtype, name, shape, dim):
    if name in ("argmax", "argmin", "max", "min") and isinstance(dim, tuple):
        dim = dim[0]
    if name in ("argmax", "argmin") and dtype == "bool":
        return assert_parity(lambda lib, x: getattr(x, name)(dim), make_tensor(shape, dtype))
    x = make_tensor(shape, dtype, low=-2, high=2)
    if dim is None:
        assert_parity(lambda lib, x: getattr(x, name)(), x)
    else:
        assert_parity(lambda lib, x: getattr(lib, name)(x, dim, keepdim=True), x)


def test_max_and_min_with_a_tensor_are_elementwise():
    assert_parity(lambda lib, x, y: (lib.max(x, y), x.min(y)), make_tensor((3, 1)), make_tensor((4,), seed=1))


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_tied_extremes_gradients(name):
    # max()/min() over everything and amax/amin share the gradient evenly among ties;
    # max(dim)/min(dim) send it all to the index they return.
    x = np.array([[1.0, 3.0, 3.0, -1.0], [-1.0, 2.0, -1.0, 2.0], [0.0, 0.0, 0.0, 0.0]], dtype="float32")
    assert_parity(lambda lib, x: getattr(x, name)(), x)
    assert_parity(lambda lib, x: getattr(x, name)(1), x)
    assert_parity(lambda lib, x: getattr(x, name)(0, keepdim=True), x)
    if name.startswith("a"):
        assert_parity(lambda lib, x: getattr(x, name)((0, 1)), x)


def test_nan_propagates_through_extremes():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.0, -1.0, 5.0]], dtype="float32")
    for name in ["max", "min", "argmax", "argmin", "amax", "amin"]:
        assert_parity(lambda lib, x: getattr(x, name)(), x, grad=False)
        assert_parity(lambda lib, x: getattr(x, name)(1), x, grad=False)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_extremes_gradcheck(name):
    x = _double((3, 4))
    assert gradcheck(lambda x: getattr(x, name)(1)[0] if name in ("max", "min") else getattr(x, name)(1), (x,))
    assert gradcheck(lambda x: getattr(x, name)(), (x,))


# --- all, any, count_nonzero, logsumexp, norm -------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
@pytest.mark.parametrize("shape, dim", [((3, 4), None), ((3, 4), 1), ((), None), ((), 0), ((2, 0), 1), ((2, 0), 0)])
def test_all_any_count_nonzero(dtype, shape, dim):
    x = make_tensor(shape, dtype, low=0, high=1)
    for name in ["all", "any", "count_nonzero"]:
        assert_parity(lambda lib, x: getattr(x, name)() if dim is None else getattr(lib, name)(x, dim), x, grad=False)


def test_count_nonzero_with_dims():
    assert_parity(lambda lib, x: x.count_nonzero((0, 2)), make_tensor((2, 3, 4), "int64", low=0, high=2))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 4), -1), ((), 0), ((5,), 0)])
def test_logsumexp(dtype, shape, dim):
    x = make_tensor(shape, dtype) * 30  # large values would overflow a naive exp
    assert_parity(lambda lib, x: lib.logsumexp(x, dim), x)
    assert_parity(lambda lib, x: x.logsumexp(dim, keepdim=True), x, noncontiguous=True)


def test_logsumexp_of_infinities_and_integers():
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 0.0]], dtype="float32")
    assert_parity(lambda lib, x: x.logsumexp(1), x)
    assert_parity(lambda lib, x: x.logsumexp(1), make_tensor((3, 4), "int64"))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2, "fro", 1, float("inf"), float("-inf"), 0, 3, 0.5])
@pytest.mark.parametrize("dim", [None, 1, (0, 1), -1])
def test_norm(dtype, p, dim):
    x = make_tensor((3, 4), dtype)
    x[0, 1] = 0.0
    if dim is None:
        assert_parity(lambda lib, x: x.norm(p), x)
    else:
        assert_parity(lambda lib, x: lib.norm(x, p, dim, keepdim=True), x)


def test_norm_gradient_at_zero_and_ties():
    zero = np.zeros((2, 3), dtype="float32")
    for p in [2, 3, float("inf")]:
        assert_parity(lambda lib, x: x.norm(p, dim=1), zero)
    tied = np.array([[1.0, -3.0, 3.0], [2.0, 2.0, 0.0]], dtype="float32")
    assert_parity(lambda lib, x: x.norm(float("inf"), dim=1), tied)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0])
def test_norm_gradcheck(p):
    x = _double((3, 4), exclude_zero=True)
    assert gradcheck(lambda x: x.norm(p, dim=1), (x,))


@pytest.mark.parametrize("shape, dim, keepdim", [((3, 4), None, False), ((2, 3, 4), (0, 2), False),
                                                 ((2, 3, 4), (-1, 1), True), ((2, 3, 4), None, False),
                                                 ((4,), None, False)])
def test_nuclear_norm_is_a_matrix_norm(shape, dim, keepdim):
    # torch.norm(x, "nuc") hands the matrix norm to linalg (a 3-d input needs its two dims).
    assert_parity(lambda lib, x: lib.norm(x, "nuc", dim, keepdim), make_tensor(shape, "float64"))


def test_norm_of_integers_raises():
    assert_parity(lambda lib, x: x.norm(), make_tensor((3,), "int64"))


# --- sum_to_size, dims and errors --------------------------------------------------


@pytest.mark.parametrize("shape, size", [((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 3, 4)), ((2, 3), (2, 3)),
                                         ((2, 3), (1,)), ((2, 3), (4, 3)), ((2, 3), (1, 2, 3))])
def test_sum_to_size(shape, size):
    assert_parity(lambda lib, x: x.sum_to_size(size), make_tensor(shape))
    assert_parity(lambda lib, x: x.sum_to_size(*size), make_tensor(shape))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
@pytest.mark.parametrize("shape, size", [((), ()), ((2, 3), ()), ((2, 3), (2, 3)), ((2, 3), (1, 3))])
def test_sum_to_size_dtypes(dtype, shape, size):
    # A 0-d size is always a sum (a bool becomes int64), even from a 0-d input; an
    # unchanged shape is the input itself.
    assert_parity(lambda lib, x: x.sum_to_size(size), make_tensor(shape, dtype), grad=False)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "max", "argmax", "logsumexp", "std", "cumsum",
                                  "all"])
@pytest.mark.parametrize("shape, dim", [((2, 3), 2), ((2, 3), -3), ((), 1), ((), -2)])
def test_dim_out_of_range(name, shape, dim):
    x = make_tensor(shape)
    assert_parity(lambda lib, x: getattr(x, name)(dim), x)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of"):
        getattr(ember.tensor(x), name)(dim)


def test_repeated_dims_raise():
    assert_parity(lambda lib, x: x.sum((0, -2)), make_tensor((2, 3)))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        ember.ones(2, 3).sum((0, -2))


@pytest.mark.parametrize("name", ["sum", "mean", "var", "std", "logsumexp", "norm", "prod"])
def test_gradcheck(name):
    x = _double((2, 3, 4))
    if name == "prod":
        assert gradcheck(lambda x: x.prod(1), (x,))
    elif name == "logsumexp":
        assert gradcheck(lambda x: x.logsumexp((0, 2)), (x,))
    else:
        assert gradcheck(lambda x: getattr(x, name)(dim=(0, 2)), (x,))
        assert gradcheck(lambda x: getattr(x, name)(dim=-1, keepdim=True), (x,))


@pytest.mark.parametrize("call", [lambda lib, x: x.sum(dtype=lib.int64), lambda lib, x: x.prod(dtype=lib.bool),
                                  lambda lib, x: x.cumsum(0, dtype=lib.int32),
                                  lambda lib, x: x.sum(0, dtype=lib.float16)])
def test_integer_dtype_of_a_tensor_requiring_grad_raises_like_torch(call):
    assert_parity(call, np.array([1.5, 2.0, 3.0]))


@pytest.mark.parametrize("values", [[1.0, INF, 3.0, 4.0], [1.0, NAN, 3.0, 4.0], [INF, INF, 3.0, 4.0],
                                    [1.0, -INF, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 3.0, 4.0]], ids=str)
@pytest.mark.parametrize("name", ["var", "std", "var(c=0)", "std(dim)", "var_mean", "std_mean", "std_mean(dim)"])
def test_var_std_gradients_with_inf_nan_and_constants(values, name):
    # A constant row has std 0 (torch's std gradient is 0 there, not 0/0); inf and NaN
    # spread through the mean as in torch. First and second derivatives.
    reduce = {
        "var": lambda lib, t: t.var(), "std": lambda lib, t: t.std(),
        "var(c=0)": lambda lib, t: t.var(correction=0), "std(dim)": lambda lib, t: t.view(2, 2).std(1),
        "var_mean": lambda lib, t: lib.stack(lib.var_mean(t)),
        "std_mean": lambda lib, t: lib.stack(lib.std_mean(t)),
        "std_mean(dim)": lambda lib, t: lib.cat(lib.std_mean(t.view(2, 2), 1)),
    }[name]
    assert_parity(first_and_second(reduce), np.array(values), grad=False)


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shape, kwargs", [((1,), {}), ((2, 3), {"dim": 1, "correction": 5}), ((0,), {}),
                                           ((4,), {}), ((3, 2), {"dim": 0, "correction": 2})])
def test_too_few_degrees_of_freedom_warn_as_torch(name, shape, kwargs):
    import warnings

    import torch

    caught = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            getattr(lib, name)(lib.ones(shape), **kwargs)
        # torch appends where in its C++ it warned; NumPy's own RuntimeWarnings must not leak
        caught.append([(w.category, str(w.message).split(" (Triggered")[0]) for w in seen])
    assert caught[0] == caught[1]
