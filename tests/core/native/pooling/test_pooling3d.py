"""max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d and their modules
against torch: values, indices, gradients (and double backward), float32 and float64,
integers, batched and unbatched, non-contiguous inputs, NaN and -inf, the errors."""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_close


def _compare(name, shape, dtype, kwargs, values=None, transposed=False):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) if values is None else values
    results = {}
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=x.dtype.kind == "f")
        source = leaf.transpose(-1, -2) if transposed else leaf
        out = getattr(lib.nn.functional, name)(source, **kwargs)
        results[lib] = leaf, out
    (e_leaf, e_out), (t_leaf, t_out) = results[ember], results[torch]
    if isinstance(t_out, tuple):
        assert_close(e_out[1], t_out[1])  # the argmax indices, exactly
        e_out, t_out = e_out[0], t_out[0]
    assert_close(e_out, t_out)  # NaN equals NaN here
    if x.dtype.kind != "f":
        return
    cotangent = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(dtype)
    (e_out * ember.tensor(cotangent)).sum().backward()
    (t_out * torch.tensor(cotangent)).sum().backward()
    assert_close(e_leaf.grad, t_leaf.grad)


MAX_CASES = [
    ((2, 3, 5, 6, 7), {"kernel_size": 2}),
    ((2, 3, 5, 6, 7), {"kernel_size": (3, 2, 3), "stride": (1, 2, 2), "padding": (1, 1, 0)}),
    ((1, 2, 7, 7, 8), {"kernel_size": 2, "dilation": (2, 1, 3), "ceil_mode": True, "stride": 2}),
    ((2, 5, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),  # unbatched
    ((0, 2, 4, 4, 4), {"kernel_size": 2}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kwargs", MAX_CASES)
def test_max_pool3d(shape, kwargs, dtype):
    _compare("max_pool3d", shape, dtype, kwargs)
    _compare("max_pool3d", shape, dtype, {**kwargs, "return_indices": True})


def test_max_pool3d_integers_nan_and_all_minus_inf_windows():
    ints = np.random.default_rng(2).integers(-5, 5, (2, 2, 4, 5, 6))
    _compare("max_pool3d", None, None, {"kernel_size": 3, "padding": 1, "return_indices": True}, values=ints)
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 4, 4))
    x[0, 0, 1, 1, 1] = np.nan
    x[0, 1, :2, :2, :2] = -np.inf  # a window of -inf: torch keeps its first inside tap
    _compare("max_pool3d", None, None, {"kernel_size": 2, "padding": 1, "return_indices": True}, values=x)


def test_max_pool3d_non_contiguous_and_double_backward():
    _compare("max_pool3d", (2, 2, 4, 5, 6), np.float64, {"kernel_size": 2, "stride": 1}, transposed=True)
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 5, 6))
    grads = {}
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.max_pool3d(leaf, 2, stride=1)
        (g,) = lib.autograd.grad((out * out).sum(), leaf, create_graph=True)
        grads[lib] = lib.autograd.grad((g * g * g).sum(), leaf)[0]
    assert_close(grads[ember], grads[torch])


AVG_CASES = [
    ((2, 3, 5, 6, 7), {"kernel_size": 2}),
    ((2, 3, 5, 6, 7), {"kernel_size": (3, 2, 3), "stride": (1, 2, 2), "padding": (1, 1, 0)}),
    ((1, 2, 7, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((1, 2, 7, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 5, 6, 7), {"kernel_size": 2, "divisor_override": 3}),  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kwargs", AVG_CASES)
def test_avg_pool3d(shape, kwargs, dtype):
    _compare("avg_pool3d", shape, dtype, kwargs)


def test_avg_pool3d_integers_non_contiguous_and_double_backward():
    ints = np.random.default_rng(5).integers(-50, 50, (2, 2, 4, 5, 6))
    _compare("avg_pool3d", None, None, {"kernel_size": 3, "padding": 1}, values=ints)
    _compare("avg_pool3d", (2, 2, 4, 5, 6), np.float64, {"kernel_size": 2, "stride": 1}, transposed=True)
    x = np.random.default_rng(6).standard_normal((1, 2, 4, 5, 6))
    grads = {}
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.avg_pool3d(leaf, 2, stride=1, padding=1)
        (g,) = lib.autograd.grad((out * out).sum(), leaf, create_graph=True)
        grads[lib] = lib.autograd.grad((g * g).sum(), leaf)[0]
    assert_close(grads[ember], grads[torch])


ADAPTIVE_CASES = [((2, 3, 5, 6, 7), 2), ((2, 3, 5, 6, 7), (3, 4, 5)), ((2, 3, 5, 6, 7), (2, None, 3)),
                  ((3, 6, 7, 8), (4, 5, 3)), ((1, 2, 4, 4, 4), 1), ((1, 2, 3, 4, 5), (5, 7, 9))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,output_size", ADAPTIVE_CASES)
def test_adaptive_pool3d(shape, output_size, dtype):
    _compare("adaptive_avg_pool3d", shape, dtype, {"output_size": output_size})
    _compare("adaptive_max_pool3d", shape, dtype, {"output_size": output_size, "return_indices": True})
    _compare("adaptive_max_pool3d", shape, dtype, {"output_size": output_size}, transposed=True)


@pytest.mark.parametrize("call", [
    lambda F, lib: F.max_pool3d(lib.ones(2, 3, 5, 6, 7), 2, stride=0),
    lambda F, lib: F.max_pool3d(lib.ones(2, 3, 5, 6, 7), 2, padding=2),
    lambda F, lib: F.max_pool3d(lib.ones(2, 3, 5, 6, 7), 2, dilation=0),
    lambda F, lib: F.max_pool3d(lib.ones(3, 5, 6), 2),
    lambda F, lib: F.max_pool3d(lib.ones(2, 3, 1, 6, 7), 2),
    lambda F, lib: F.avg_pool3d(lib.ones(2, 3, 5, 6, 7), 2, padding=2),
    lambda F, lib: F.avg_pool3d(lib.ones(2, 3, 1, 6, 7), 2),
    lambda F, lib: F.avg_pool3d(lib.ones(2, 3, 5, 6, 7), 2, divisor_override=0),
    lambda F, lib: F.adaptive_avg_pool3d(lib.ones(3, 5, 6), 2),
    lambda F, lib: F.adaptive_max_pool3d(lib.ones(3, 5, 6), 2),
    lambda F, lib: F.adaptive_avg_pool3d(lib.ones(2, 3, 0, 6, 7), 2),
    lambda F, lib: F.adaptive_max_pool3d(lib.ones(2, 3, 0, 6, 7), 2),
])
def test_errors_like_torch(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch.nn.functional, torch)
    with pytest.raises(RuntimeError) as actual:
        call(ember.nn.functional, ember)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("name", ["adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_adaptive_integers_refused_like_torch(name):
    with pytest.raises(NotImplementedError) as expected:
        getattr(torch.nn.functional, name)(torch.ones(1, 2, 3, 4, 5, dtype=torch.int64), 2)
    with pytest.raises(NotImplementedError) as actual:
        getattr(ember.nn.functional, name)(ember.ones(1, 2, 3, 4, 5, dtype=ember.int64), 2)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("name,args,kwargs", [
    ("MaxPool3d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ("AvgPool3d", ((2, 3, 2),), {"count_include_pad": False}),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), {"return_indices": True}),
])
def test_modules(name, args, kwargs):
    e_module, t_module = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_module) == repr(t_module)
    x = np.random.default_rng(7).standard_normal((2, 3, 6, 7, 8)).astype(np.float32)
    e_out, t_out = e_module(ember.tensor(x)), t_module(torch.tensor(x))
    for e, t in zip(e_out if isinstance(t_out, tuple) else [e_out], t_out if isinstance(t_out, tuple) else [t_out]):
        assert_close(e, t)
