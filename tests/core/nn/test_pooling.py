"""Pooling against torch: max_pool1d/2d (indices, padding, dilation, ceil_mode),
avg_pool1d/2d (count_include_pad, ceil_mode, divisor_override), adaptive avg/max
pooling (sizes that do and do not divide), functional and layers: outputs, indices,
input gradients, float32/float64, non-contiguous and unbatched inputs; gradcheck and
double backward; errors."""

import numpy as np
import pytest
import torch
from spatial_parity import TOLERANCE, check_layer, same_error

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close, assert_parity, make_tensor

FLOATS = ["float32", "float64"]

MAX_POOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1), ceil_mode=True),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=1, dilation=2),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", MAX_POOL2D_CASES)
def test_max_pool2d(dtype, kwargs):
    x = make_tensor((2, 3, 7, 6), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, **kwargs, return_indices=True), x)
    assert_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, **kwargs), x, noncontiguous=True)


def test_max_pool2d_ties_and_nan():
    """Ties keep the first maximum; a NaN wins its window (PyTorch's rule)."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    x[0, 0, 1, 1] = np.nan
    assert_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=1, return_indices=True), x)
    assert_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=1, padding=1, return_indices=True),
                  np.ones((1, 2, 3, 3), np.float32))


def test_integer_inputs():
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 6, 6))
    assert_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True), x)
    assert_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=2, dilation=3), dict(kernel_size=4)])
def test_max_pool1d(dtype, kwargs):
    x = make_tensor((2, 3, 11), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.max_pool1d(x, **kwargs, return_indices=True), x)
    assert_parity(lambda lib, x: lib.nn.functional.max_pool1d(x[0], **kwargs), x)  # unbatched


AVG_POOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, divisor_override=5),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", AVG_POOL2D_CASES)
def test_avg_pool2d(dtype, kwargs):
    x = make_tensor((2, 3, 7, 6), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x, **kwargs), x, noncontiguous=True,
                  **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x[0], **kwargs), x, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=3, padding=1, count_include_pad=False), dict(kernel_size=5)])
def test_avg_pool1d(dtype, kwargs):
    assert_parity(lambda lib, x: lib.nn.functional.avg_pool1d(x, **kwargs), make_tensor((2, 3, 11), dtype),
                  **TOLERANCE[dtype])


ADAPTIVE_SIZES = [1, (3, 4), (4, None), (7, 6), (5, 2), (2, 3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size", ADAPTIVE_SIZES)
def test_adaptive_pool2d(dtype, size):
    x = make_tensor((2, 3, 7, 6), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size), x, **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, size, return_indices=True), x)
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x[1], size), x, noncontiguous=True,
                  **TOLERANCE[dtype])


GLOBAL_POOL_LAYOUTS = {
    "row_major": lambda lib, x: x,                                   # the matrix-vector product
    "channels_last": lambda lib, x: x.contiguous(memory_format=lib.channels_last),  # the mean
    "sliced": lambda lib, x: x[:, :, ::2],                           # the mean
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", sorted(GLOBAL_POOL_LAYOUTS))
@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 64, 7, 7), (8, 16, 1, 1), (3, 1, 4, 4), (1, 5, 1, 9)])
def test_global_average_pooling_as_torch(shape, layout, dtype):
    # NOTE [ Global average pooling as one matrix-vector product ]: values, the output's
    # strides, the gradient (values and strides) and the node's name against torch.
    values = make_tensor(shape, dtype)
    seed = make_tensor((shape[0], shape[1], 1, 1), dtype, seed=1)
    results = []
    for lib in (ember, torch):
        x = GLOBAL_POOL_LAYOUTS[layout](lib, lib.tensor(values)).detach().requires_grad_()
        out = lib.nn.functional.adaptive_avg_pool2d(x, 1)
        (grad,) = lib.autograd.grad(out, x, lib.tensor(seed))
        results.append((out, grad, out.stride(), grad.stride(), out.grad_fn.name()))
    (out, grad, *layout_and_name), (expected, expected_grad, *torch_layout_and_name) = results
    assert_close(out, expected, **TOLERANCE[dtype])
    assert_close(grad, expected_grad, **TOLERANCE[dtype])
    if layout != "channels_last":  # ember's restride there is AsStridedBackward0, torch's in-place one ...1
        assert layout_and_name == torch_layout_and_name
    else:
        assert layout_and_name[:2] == torch_layout_and_name[:2]


@pytest.mark.parametrize("dtype", FLOATS)
def test_global_average_pooling_equals_the_mean_it_replaces(dtype):
    x = ember.tensor(make_tensor((4, 6, 5, 3), dtype), requires_grad=True)
    fast = ember.nn.functional.adaptive_avg_pool2d(x, 1)
    mean = x.mean((-2, -1), keepdim=True)
    # (the sums run in another order: BLAS's running sums, NumPy's pairwise ones)
    np.testing.assert_allclose(fast.detach().numpy(), mean.detach().numpy(), **TOLERANCE[dtype])
    assert fast.stride() == mean.stride()
    seed = ember.tensor(make_tensor((4, 6, 1, 1), dtype, seed=1))
    (fast_grad,) = ember.autograd.grad(fast, x, seed)
    (mean_grad,) = ember.autograd.grad(mean, x, seed)
    assert np.array_equal(fast_grad.numpy(), mean_grad.numpy()) and fast_grad.stride() == mean_grad.stride()
    x64 = x.detach().double().requires_grad_()
    assert gradgradcheck(lambda t: ember.nn.functional.adaptive_avg_pool2d(t, 1), (x64,))


@pytest.mark.parametrize("size", [1, 3, 5, 8])
def test_adaptive_pool1d(size):
    x = make_tensor((2, 3, 8))
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, size), x, **TOLERANCE["float32"])
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, size, return_indices=True), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size", [1, 2, (3, None, 2), (4, 5, 6), (2, 1, 5)])
def test_adaptive_avg_pool3d(dtype, size):
    x = make_tensor((2, 3, 4, 5, 6), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, size), x, **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x[1], size), x, noncontiguous=True,
                  **TOLERANCE[dtype])
    assert_parity(lambda lib, x: lib.nn.AdaptiveAvgPool3d(size)(x), x, **TOLERANCE[dtype])


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(2, 3, 4), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(2, 3, 4, 5), (2, 1)),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(2, 3, 4, 5, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.ones(2, 0, 4, 5), 2),
])
def test_adaptive_avg_pool3d_errors(program):
    same_error(program)


@pytest.mark.parametrize("shape, size", [((0, 2, 4, 5, 3), 2), ((2, 4, 5, 3), 0)])
def test_adaptive_avg_pool3d_of_nothing(shape, size):
    assert_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, size), make_tensor(shape), grad=False)


INFINITE_POOLS = {
    "adaptive_avg_pool1d": lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x[0], 3),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (3, 2)),
    "interpolate_area_1d": lambda lib, x: lib.nn.functional.interpolate(x[0], size=3, mode="area"),
    "interpolate_area_2d": lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 3), mode="area"),
    "adaptive_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, (2, 2, 3)),
    "interpolate_area_3d": lambda lib, x: lib.nn.functional.interpolate(x[None], size=(1, 2, 3), mode="area"),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", INFINITE_POOLS)
@pytest.mark.parametrize("infinities", [[(0, 0, 0, 0, -np.inf)], [(0, 0, 1, 3, np.inf)],
                                        [(0, 0, 1, 1, np.inf), (0, 0, 1, 1, np.nan)],
                                        [(0, 1, 2, 3, np.inf), (0, 1, 2, 2, -np.inf)]])
def test_adaptive_average_of_an_infinity_stays_in_its_windows(dtype, name, infinities):
    # NOTE [ Adaptive pooling of infinities ]: [-inf, 1, 2, 3] pooled to 3 is [-inf, 1.5, 2.5].
    x = make_tensor((2, 2, 3, 4), dtype)
    for *index, value in infinities:
        x[tuple(index)] = value
    assert_parity(INFINITE_POOLS[name], x, **TOLERANCE[dtype])


def test_gradcheck_and_double_backward():
    x = ember.tensor(make_tensor((1, 2, 5, 6), "float64")).requires_grad_()
    F = ember.nn.functional
    functions = [
        lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
        lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
        lambda x: F.adaptive_max_pool2d(x, (4, 4)),
        lambda x: F.max_pool1d(x[0], 2, dilation=2),
    ]
    for fn in functions:
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_double_backward_matches_torch():
    x = make_tensor((2, 3, 6, 6), "float64")
    results = []
    for lib in (ember, torch):
        F = lib.nn.functional
        xs = lib.tensor(x).requires_grad_()
        y = F.max_pool2d(xs.sin(), 2) * F.avg_pool2d(xs, 3, 1, 1)[..., ::2, ::2]
        (g,) = lib.autograd.grad(y.sum(), xs, create_graph=True)
        results.append(lib.autograd.grad((g * g).sum(), xs))
    assert_close(results[0][0], results[1][0], rtol=1e-7, atol=1e-9)


LAYERS = [
    ("MaxPool2d", (3,), dict(stride=2, padding=1, return_indices=True)),
    ("MaxPool2d", ((2, 3),), dict(ceil_mode=True, dilation=(1, 2))),
    ("MaxPool1d", (3,), dict(stride=2, padding=1)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("AvgPool2d", (2,), dict(divisor_override=3, ceil_mode=True)),
    ("AvgPool1d", (3,), dict(stride=2)),
    ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool2d", (1,), {}),
    ("AdaptiveAvgPool1d", (4,), {}),
    ("AdaptiveMaxPool2d", ((3, 5),), dict(return_indices=True)),
    ("AdaptiveMaxPool1d", (3,), {}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, args, kwargs", LAYERS)
def test_layers(dtype, name, args, kwargs):
    ours, theirs = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    shape = (2, 3, 9) if name.endswith("1d") else (1, 3, 7, 9)
    check_layer(ours, theirs, make_tensor(shape, dtype), dtype)


ERRORS = [
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(2, 3, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(2, 3, 5, 5), 6),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(2, 3, 5, 5, 5), 2),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(5), 2),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(2, 3, 5, 5), 2, stride=0),
    lambda lib: lib.nn.functional.max_pool2d(lib.zeros(2, 3, 5, 5), 2, dilation=0),
    lambda lib: lib.nn.functional.max_pool1d(lib.zeros(2, 3, 5), 6),
    lambda lib: lib.nn.functional.max_pool1d(lib.zeros(2, 3, 5), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool1d(lib.zeros(2, 3, 3, 5), 3),
    lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(2, 3, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(2, 3, 5, 5), 6),
    lambda lib: lib.nn.functional.avg_pool1d(lib.zeros(2, 3, 5), 6),
    lambda lib: lib.nn.functional.avg_pool2d(lib.zeros(2, 3, 5, 5), 2, divisor_override=0),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.zeros(2, 3, 0, 4), (2, 2)),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.zeros(5, 5), (2, 2)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.zeros(5, 5), (2, 2)),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.zeros(2, 3, 5, 5), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 2, 5, 5, dtype=lib.int64), (2, 3)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.zeros(1, 2, 5, 5, dtype=lib.int64), (2, 3)),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    same_error(ERRORS[index])


def test_checks_and_divisors_cached_per_size_leave_other_calls_alone():
    # checks, geometry and avg divisors are cached per set of sizes: a failing set
    # raises torch's message each time, and the same input with other sizes is its own
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 7))
    for _ in range(2):
        same_error(lambda lib: lib.nn.functional.avg_pool2d(lib.tensor(x), 3, padding=2))
        for kwargs in (dict(padding=1), dict(padding=1, count_include_pad=False), dict(stride=1),
                       dict(ceil_mode=True, stride=2)):
            assert_parity(lambda lib, t: lib.nn.functional.avg_pool2d(t, 3, **kwargs), x)
            assert_parity(lambda lib, t: lib.nn.functional.max_pool2d(t, 3, **kwargs), x)


def test_max_pool_backward_with_infinite_gradient():
    """An inf in the output gradient reaches only its argmax (no 0 * inf = NaN elsewhere)."""
    x = make_tensor((1, 2, 4, 4))
    g = np.ones((1, 2, 2, 2), np.float32)
    g[0, 1, 0, 1] = np.inf
    grads = []
    for lib in (ember, torch):
        xs = lib.tensor(x).requires_grad_()
        lib.nn.functional.max_pool2d(xs, 2).backward(lib.tensor(g))
        grads.append(xs.grad)
    assert_close(grads[0], grads[1])
