"""softmax, log_softmax, cumsum, cumprod (ember/native/softmax.py) against PyTorch:
values, dtypes, gradients (exact cumprod gradients with zeros), 0-d, empty and
non-contiguous inputs, and the errors."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
SHAPE_DIMS = [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1), ((5,), 0), ((), 0), ((), -1),
              ((0,), 0), ((2, 0, 3), 2), ((2, 0, 3), 1)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", SHAPE_DIMS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(dtype, shape, dim, name):
    x = np.asarray(make_tensor(shape, dtype) * 40)  # exp would overflow without the max shift
    assert_parity(lambda lib, x: getattr(lib, name)(x, dim), x)
    assert_parity(lambda lib, x: getattr(x, name)(dim), x, noncontiguous=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_infinities(name):
    x = np.array([[-np.inf, 0.0, 1.0], [np.inf, 1.0, 0.0], [-np.inf, -np.inf, 2.0]], dtype="float32")
    assert_parity(lambda lib, x: getattr(x, name)(1), x)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_softmax_dtype_argument(name, dtype):
    x = make_tensor((3, 4), dtype)
    assert_parity(lambda lib, x: getattr(lib, name)(x, 1, dtype=lib.float64), x)
    assert_parity(lambda lib, x: getattr(x, name)(0), x)  # integers raise without dtype=


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_bad_dim(name):
    assert_parity(lambda lib, x: getattr(x, name)(2), make_tensor((3, 4)))
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(ember.ones(3, 4), name)(-3)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(0, 2), (2, 0), (), (3,)])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_of_integers_refuses_unless_empty(name, shape, dim):
    # PyTorch has no integer kernel, but returns an empty input (its dtype kept) before asking for one.
    assert_parity(lambda lib, x: getattr(x, name)(dim), make_tensor(shape, "int64"), grad=False)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["transposed", "sliced", "channels_last"])
def test_softmax_result_is_row_major_whatever_the_input(name, layout):
    def run(lib, x):
        x = {"transposed": x.transpose(1, 3), "sliced": x[:, :, ::2],
             "channels_last": x.contiguous(memory_format=lib.channels_last)}[layout]
        out = getattr(lib, name)(x, 1)
        return out, out.stride()

    assert_parity(run, make_tensor((2, 3, 4, 5)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradcheck(name):
    x = ember.tensor(make_tensor((3, 4), "float64")).requires_grad_()
    assert gradcheck(lambda x: getattr(x, name)(1), (x,))
    assert gradgradcheck(lambda x: getattr(x, name)(0), (x,))


# --- cumsum, cumprod ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", SHAPE_DIMS)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative(dtype, shape, dim, name):
    x = make_tensor(shape, dtype, low=0.5, high=1.5)
    assert_parity(lambda lib, x: getattr(lib, name)(x, dim), x)
    assert_parity(lambda lib, x: getattr(x, name)(dim), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64"])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_integers_accumulate_in_int64(dtype, name):
    x = make_tensor((3, 5), dtype, low=-3, high=3)
    assert_parity(lambda lib, x: getattr(x, name)(1), x)
    assert_parity(lambda lib, x: getattr(lib, name)(x, 0, dtype=lib.int16), x)
    assert_parity(lambda lib, x: getattr(lib, name)(x, 0, dtype=lib.float64), x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_float_dtype_argument(name):
    assert_parity(lambda lib, x: getattr(x, name)(1, dtype=lib.float64), make_tensor((3, 4)))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_bad_dim(name):
    assert_parity(lambda lib, x: getattr(x, name)(2), make_tensor((3, 4)))
    assert_parity(lambda lib, x: getattr(x, name)(1), make_tensor(()))


# Positions of zeros along the last dim of a (2, 5) input: none, one (first, middle,
# last), two, and a whole row.
ZERO_PATTERNS = [[], [0], [2], [4], [1, 3], [2, 3], [5, 6, 7, 8, 9]]


@pytest.mark.parametrize("zeros", ZERO_PATTERNS)
@pytest.mark.parametrize("dim", [1, 0])
def test_cumprod_gradient_is_exact_with_zeros(zeros, dim):
    x = make_tensor((2, 5), "float64", exclude_zero=True)
    x.reshape(-1)[zeros] = 0.0
    assert_parity(lambda lib, x: x.cumprod(dim), x)
    t = ember.tensor(x).requires_grad_()
    assert gradcheck(lambda t: t.cumprod(dim), (t,))


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [2.0, 0.0, 3.0, 0.0], [0.0, 5.0, 0.5, 2.0],
                                    [2.0, float("inf"), 3.0], [2.0, float("nan"), 3.0]], ids=str)
def test_cumprod_second_derivative_with_zeros_inf_nan(values):
    # Under create_graph the gradient after a zero stays a multiple of it, so the
    # second derivative is exact there, as torch's.
    def run(lib, x):
        x = x.requires_grad_()
        (g,) = lib.autograd.grad((x.cumprod(0) * lib.arange(1.0, len(values) + 1)).sum(), x, create_graph=True)
        return g, lib.autograd.grad(g.sum(), x)
    assert_parity(run, np.array(values), grad=False)



@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_gradgradcheck(name):
    x = ember.tensor(make_tensor((2, 4), "float64", low=0.5, high=1.5)).requires_grad_()
    assert gradcheck(lambda x: getattr(x, name)(1), (x,))
    assert gradgradcheck(lambda x: getattr(x, name)(0), (x,))


def test_exclusive_cumprod():
    from ember.native.softmax import exclusive_cumprod

    x = make_tensor((3, 4), exclude_zero=True)
    x[1, 2] = 0.0
    expected = np.concatenate([np.ones((3, 1), "float32"), np.cumprod(x, 1)[:, :-1]], 1)
    np.testing.assert_allclose(exclusive_cumprod(ember.tensor(x), 1).numpy(), expected, rtol=1e-6)
    assert exclusive_cumprod(ember.ones(2, 0), 1).shape == (2, 0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", [((128, 10), 1), ((2, 3, 4), 1), ((5,), 0), ((), 0), ((0, 3), 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_fused_backward_matches_the_differentiable_one(dtype, shape, dim, name):
    # NOTE [ Fused softmax backwards ]: the one-op backward (no create_graph) against the
    # backward built from ember ops (create_graph=True), and both against torch.
    x = make_tensor(shape, dtype, seed=3)
    assert_parity(lambda lib, x: getattr(lib, name)(x, dim), x)
    grads = []
    for create_graph in (False, True):
        leaf = ember.tensor(x, requires_grad=True)
        seed = ember.tensor(make_tensor(shape, dtype, seed=4))
        (grad,) = ember.autograd.grad(getattr(leaf, name)(dim), leaf, seed, create_graph=create_graph)
        grads.append(grad.detach().numpy())
    # log_softmax's fused backward sums each row of the gradient by BLAS on 2-d inputs
    # (NOTE [ log_softmax over short rows ]), the ember ops pairwise: in float32 the two
    # sums of ten values of either sign differ by a few ulps of 1
    atol = 5e-7 if dtype == "float32" else 1e-7
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6 if dtype == "float32" else 1e-13, atol=atol)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_second_derivative_matches_torch(name):
    x = make_tensor((4, 6), "float64", seed=5)

    def fn(lib, x):
        (grad,) = lib.autograd.grad((getattr(x, name)(1) ** 2).sum(), x, create_graph=True)
        return grad

    assert_parity(fn, x, rtol=1e-10, atol=1e-12, grad_rtol=1e-10, grad_atol=1e-12)


def _softmax_of(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True, initial=-np.inf))
    return np.asarray(e / e.sum(axis=dim, keepdims=True), dtype=x.dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((5,), 0), ((), 0), ((2, 0, 3), 1)])
def test_softmax_backward_data(dtype, shape, dim):
    # values and the gradients of both the incoming gradient and the softmax's output
    g = np.asarray(make_tensor(shape, dtype))
    y = _softmax_of(make_tensor(shape, dtype, seed=2), dim)
    assert_parity(lambda lib, g, y: lib._softmax_backward_data(g, y, dim, g.dtype), g, y)
    assert_parity(lambda lib, g, y: lib._softmax_backward_data(g, y, dim, g.dtype), g, y, noncontiguous=True)


def test_softmax_backward_data_to_input_dtype_and_errors():
    g = np.asarray(make_tensor((3, 4), "float32"))
    y = _softmax_of(make_tensor((3, 4), "float32", seed=2), 1)
    for dtype in ("float64", "float16", "bfloat16", "int64"):  # the CPU keeps the gradient's dtype; half refused
        assert_parity(lambda lib, g, y: lib._softmax_backward_data(g, y, 1, getattr(lib, dtype)), g, y)
    assert_parity(lambda lib, g, y: lib._softmax_backward_data(g.double(), y, 1, lib.float64), g, y)
    assert_parity(lambda lib, g, y: lib._softmax_backward_data(g, y, 2, lib.float32), g, y)


def test_softmax_backward_data_gradgradcheck():
    g = ember.tensor(np.asarray(make_tensor((2, 3), "float64")), requires_grad=True)
    y = ember.tensor(_softmax_of(make_tensor((2, 3), "float64", seed=2), 1), requires_grad=True)
    assert gradcheck(lambda g, y: ember._softmax_backward_data(g, y, 1, ember.float64), (g, y))
    assert gradgradcheck(lambda g, y: ember._softmax_backward_data(g, y, 1, ember.float64), (g, y))
