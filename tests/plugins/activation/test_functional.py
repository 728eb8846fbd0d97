"""Every functional activation against torch.nn.functional: outputs and input
gradients in float32 and float64, at the kinks, at extreme inputs, on non-contiguous
inputs, and the errors for bad dtypes and arguments.

Tests for plugins/activation/src/ember_activation/{rectifiers,exponential,gelu,
sigmoid_family,softmax,glu}.py (PyTorch counterpart: torch/nn/functional.py, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.testing import assert_parity, make_tensor
from tests.plugins.activation.cases import ALONG_DIM, ELEMENTWISE, EXTREMES, KINKS, case_id


def call(lib, name, x, kwargs):
    return getattr(lib.nn.functional, name)(x, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ELEMENTWISE + ALONG_DIM, ids=case_id)
def test_values_and_input_gradients(case, dtype):
    name, kwargs = case
    assert_parity(lambda lib, x: call(lib, name, x, kwargs), make_tensor((3, 4, 6), dtype, low=-7, high=7))


@pytest.mark.parametrize("case", ELEMENTWISE + ALONG_DIM, ids=case_id)
def test_noncontiguous_input(case):
    name, kwargs = case
    assert_parity(lambda lib, x: call(lib, name, x, kwargs), make_tensor((2, 4, 6), "float64", seed=3),
                  noncontiguous=True)


@pytest.mark.parametrize("case", ELEMENTWISE, ids=case_id)
def test_gradient_at_the_kinks(case):
    # The value of the derivative exactly at a breakpoint is a convention (hardtanh:
    # 0 on the bounds; threshold: 0 at the threshold; ...): it must be torch's.
    name, kwargs = case
    for dtype in ("float32", "float64"):
        assert_parity(lambda lib, x: call(lib, name, x, kwargs), KINKS.astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ELEMENTWISE, ids=case_id)
def test_extreme_inputs(case, dtype):
    name, kwargs = case
    x = EXTREMES.astype(dtype)
    ours, _ = assert_parity(lambda lib, x: call(lib, name, x, kwargs), x, atol=1e-30 if dtype == "float64" else None)
    assert bool(ours.isfinite().all()), f"{name} gave a non-finite value at {x}"


# relu is the core's op, whose threshold_backward gives 0 at NaN where torch passes
# the gradient (reported to the core); exact gelu is checked at +inf separately.
NAN_CASES = [case for case in ELEMENTWISE if case != ("relu", {})]


@pytest.mark.parametrize("case", NAN_CASES, ids=case_id)
def test_nan_and_infinite_inputs(case):
    # NaN must take the branch PyTorch's comparison sends it to (values and gradients).
    name, kwargs = case
    values = [np.nan, -np.inf, 1.0, -1.0] + ([] if case == ("gelu", {}) else [np.inf])
    assert_parity(lambda lib, x: call(lib, name, x, kwargs), np.array(values, dtype="float32"))


def test_exact_gelu_at_infinity_is_the_limit():
    # gelu(+inf) is the limit +inf. torch 2.13's float32 CPU answer depends on the SIMD
    # kernel its CPU dispatch picks (AVX2: inf; AVX-512: nan), so only ember's is pinned.
    # gelu(-inf) = -inf * Phi(-inf) = -inf * 0 is nan on both sides, as IEEE says.
    out = ember.nn.functional.gelu(ember.tensor([np.inf, -np.inf]))
    assert out[0].item() == np.inf and np.isnan(out[1].item())
    assert np.isnan(torch.nn.functional.gelu(torch.tensor([np.inf, -np.inf]))[1].item())


@pytest.mark.parametrize("name", ["softplus", "logsigmoid", "mish", "silu"])
def test_stable_forms_keep_tiny_values(name):
    # Where the result underflows only in a naive formula, e.g. softplus(-100) = 3.7e-44.
    x = np.array([-745.0, -700.0, -100.0, -50.0], dtype="float64")
    assert_parity(lambda lib, x: call(lib, name, x, {}), x, rtol=1e-12, atol=1e-300)


def test_softplus_is_finite_where_torchs_exp_overflows():
    # With a huge threshold torch evaluates log1p(exp(1000)) = inf and its gradient
    # inf / inf = nan; the stable form gives x and 1 (the exact limits).
    x = ember.tensor([100.0, 1000.0], requires_grad=True)
    y = ember.nn.functional.softplus(x, threshold=1e9)
    (grad,) = ember.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(y.detach().numpy(), [100.0, 1000.0])
    np.testing.assert_allclose(grad.numpy(), [1.0, 1.0])
    torch_y = torch.nn.functional.softplus(torch.tensor([100.0, 1000.0]), threshold=1e9)
    assert not bool(torch_y.isfinite().all())  # the limitation this test documents


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("case", ELEMENTWISE + ALONG_DIM, ids=case_id)
def test_integer_and_bool_inputs(case, dtype):
    # Same result (relu, hardtanh, threshold keep integers; sigmoid/tanh/softsign/tanhshrink
    # promote) or the same exception type (gelu, elu, ... have no integer kernel).
    name, kwargs = case
    assert_parity(lambda lib, x: call(lib, name, x, kwargs), make_tensor((2, 4), dtype, low=-3, high=3))


@pytest.mark.parametrize("name", ["gelu", "silu", "elu", "softplus", "mish", "leaky_relu", "hardswish",
                                  "hardsigmoid", "logsigmoid", "hardshrink", "softshrink", "glu"])
def test_dtype_error_messages(name):
    x = ember.tensor([[1, 2]])
    with pytest.raises(NotImplementedError) as expected:
        getattr(torch.nn.functional, name)(torch.tensor([[1, 2]]))
    with pytest.raises(NotImplementedError) as actual:
        getattr(ember.nn.functional, name)(x)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("call_both", [
    lambda F, x: F.gelu(x, approximate="exact"),
    lambda F, x: F.celu(x, alpha=0.0),
    lambda F, x: F.softshrink(x, -0.5),
    lambda F, x: F.glu(x, dim=1),
    lambda F, x: F.glu(x[0, 0]),
], ids=["gelu-approximate", "celu-alpha0", "softshrink-negative", "glu-odd", "glu-scalar"])
def test_argument_errors(call_both):
    with pytest.raises(RuntimeError) as expected:
        call_both(torch.nn.functional, torch.ones(2, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError) as actual:
        call_both(ember.nn.functional, ember.ones(2, 3, dtype=ember.float64))
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("shapes", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)), ((2, 3, 4, 5), (3,)),
                                    ((2, 3, 4, 5), (1,)), ((3,), ()), ((), (1,))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prelu_values_and_gradients(shapes, dtype):
    x_shape, w_shape = shapes
    weight = make_tensor(w_shape, dtype, low=-1, high=1, seed=5)
    assert_parity(lambda lib, x, w: lib.nn.functional.prelu(x, w), make_tensor(x_shape, dtype), weight)


@pytest.mark.parametrize("shapes", [((2, 3), (2,)), ((3,), (3,)), ((2, 3), (3, 1)), ((), (2,))], ids=str)
def test_prelu_errors(shapes):
    x_shape, w_shape = shapes
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.prelu(torch.ones(x_shape), torch.ones(w_shape))
    with pytest.raises(RuntimeError) as actual:
        ember.nn.functional.prelu(ember.ones(x_shape), ember.ones(w_shape))
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (2, 3, 4, 2)], ids=str)
def test_softmax_implicit_dim_warns_and_picks_torchs_dim(name, shape):
    x = make_tensor(shape, "float64")
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been deprecated"):
        ours = getattr(ember.nn.functional, name)(ember.tensor(x))
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}"):
        theirs = getattr(torch.nn.functional, name)(torch.from_numpy(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_dtype_argument(name):
    assert_parity(lambda lib, x: getattr(lib.nn.functional, name)(x, 1, dtype=lib.float64),
                  make_tensor((3, 4), "float32"))
    assert_parity(lambda lib, x: getattr(lib.nn.functional, name)(x, 0, dtype=lib.float32),
                  make_tensor((3, 4), "int64"))


def test_softmax_is_stable_for_large_logits():
    x = np.array([[1000.0, 0.0, -1000.0], [-1e4, -1e4 + 1, -1e4 + 2]], dtype="float32")
    for name in ("softmax", "log_softmax", "softmin"):
        out, _ = assert_parity(lambda lib, x: getattr(lib.nn.functional, name)(x, dim=1), x)
        assert not bool(out.isnan().any())


def test_grad_fn_names_follow_torchs():
    x = ember.randn(4, requires_grad=True)
    t = torch.randn(4, requires_grad=True)
    for name in ("gelu", "silu", "mish", "softplus", "elu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish",
                 "logsigmoid", "hardshrink", "softshrink", "relu", "relu6", "selu", "celu", "threshold"):
        args = (0.5, 2.0) if name == "threshold" else ()
        ours = getattr(ember.nn.functional, name)(x, *args).grad_fn.name()
        theirs = getattr(torch.nn.functional, name)(t, *args).grad_fn.name()
        assert ours == theirs, name
