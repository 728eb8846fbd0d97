"""The direct 3x3 convolution (NOTE [ A direct 3x3 convolution ]): its NumPy kernels
are torch's convolution and weight gradient, the fixed rule runs them for float32
NCHW 3x3 stride-1 outputs and both gradients on one BLAS thread where compiled
kernels serve them (ember-numba's), the weight's gradient on rows a whole number of
segments long, and conv2d's values and both gradients are then torch's: odd sizes,
every border, channel counts off the block and row lengths off the segment.

Tests for core/src/ember/native/convolution/direct.py (PyTorch counterpart: oneDNN's
direct convolution, aten/src/ATen/native/mkldnn/Conv.cpp, v2.13).
"""

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import ember
from ember.native.convolution import algorithm, direct
from ember.native.fold import Geometry

# (N, C, H, W, O, padding): the ResNet case, channels and widths off the block and the
# segment (the last block and segment overlap), no padding, unequal and wide padding,
# a row exactly one segment long
CASES = [
    (2, 16, 12, 32, 16, (1, 1)),
    (3, 9, 7, 19, 13, (1, 1)),
    (2, 8, 6, 18, 8, (0, 0)),
    (1, 10, 5, 19, 11, (1, 0)),
    (2, 8, 4, 16, 9, (2, 2)),
]


def _arrays(case, dtype, seed=0):
    N, C, H, W, O, _ = case
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((N, C, H, W)).astype(dtype), rng.standard_normal((O, C, 3, 3)).astype(dtype),
            rng.standard_normal(O).astype(dtype))


def _torch(x, w, b, padding):
    return torch.nn.functional.conv2d(*(torch.tensor(a) for a in (x, w, b)), padding=padding).numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_the_numpy_kernel_is_torchs_convolution(case, dtype):
    x, w, b = _arrays(case, dtype)
    expected = _torch(x, w, b, case[5])
    out = np.full(expected.shape, 7, dtype=dtype)  # every entry must be written
    direct.conv3x3_into(np, x.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2), w, b, out, case[5])
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_the_numpy_weight_gradient_is_torchs(case, dtype):
    x, w, b = _arrays(case, dtype)
    grad = np.random.default_rng(1).standard_normal(_torch(x, w, b, case[5]).shape).astype(dtype)
    expected = torch.nn.grad.conv2d_weight(torch.tensor(x, dtype=torch.float64), w.shape,
                                           torch.tensor(grad, dtype=torch.float64), padding=case[5]).numpy()
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(direct.conv3x3_weight(np, x, grad, case[5]), expected, rtol=tolerance, atol=tolerance)


def _geometry(shape, padding=(1, 1), stride=(1, 1), dilation=(1, 1)):
    return Geometry(shape, (3, 3), stride, padding, dilation)


def _compiled(monkeypatch):
    monkeypatch.setattr(direct, "kernel_of", lambda op, xp: (lambda *a: None))  # a kernel that is not the generic


@pytest.mark.parametrize("change, applies", [
    ({}, True),
    ({"dtype": "float64"}, False),  # float64 keeps the GEMM kernels
    ({"groups": 2}, False),
    ({"C": 7}, False),  # fewer than MIN_CHANNELS
    ({"O": 7}, False),  # no block of output channels to fill
    ({"W": 15}, False),  # no row segment to fill
    ({"stride": (2, 2)}, False),
    ({"dilation": (2, 2)}, False),
    ({"threads": 2}, False),  # BLAS's threads would run the GEMM kernels
])
def test_where_the_direct_kernel_applies(change, applies, monkeypatch):
    _compiled(monkeypatch)
    shape = (2, change.get("C", 8), 5, change.get("W", 16))
    g = _geometry(shape, stride=change.get("stride", (1, 1)), dilation=change.get("dilation", (1, 1)))
    with threadpool_limits(change.get("threads", 1), user_api="blas"):
        arguments = (np, g, change.get("groups", 1), np.dtype(change.get("dtype", "float32")), change.get("O", 8))
        assert direct.applies(*arguments) == applies
        assert direct.weight_applies(*arguments) == applies


def test_the_weight_gradient_needs_whole_segments(monkeypatch):
    _compiled(monkeypatch)
    with threadpool_limits(1, user_api="blas"):
        assert direct.applies(np, _geometry((2, 8, 5, 17)), 1, np.dtype("float32"), 8)
        assert not direct.weight_applies(np, _geometry((2, 8, 5, 17)), 1, np.dtype("float32"), 8)
        assert direct.weight_applies(np, _geometry((2, 8, 5, 32)), 1, np.dtype("float32"), 8)


def test_without_a_compiled_kernel_or_on_another_namespace_the_rule_keeps_gemm(monkeypatch):
    """The NumPy kernel makes C*9 passes over the output: a readable order, not a fast one."""
    g = _geometry((2, 8, 5, 16))
    with threadpool_limits(1, user_api="blas"):
        monkeypatch.setattr(direct, "kernel_of", lambda op, xp: op.generic)
        assert not direct.applies(np, g, 1, np.dtype("float32"), 8)
        _compiled(monkeypatch)
        assert not direct.applies(type("cupy", (), {"__name__": "cupy"}), g, 1, np.dtype("float32"), 8)


def _results(lib, x, w, b, grad, padding):
    X, W, B = (lib.tensor(a).requires_grad_() for a in (x, w, b))
    y = lib.nn.functional.conv2d(X, W, B, padding=padding)
    y.backward(lib.tensor(grad))
    return [t.detach().numpy() for t in (y, X.grad, W.grad, B.grad)]


@pytest.mark.parametrize("case", CASES)
def test_conv2d_on_the_direct_kernel_is_torchs_values_and_gradients(case, monkeypatch):
    calls, forward, weight_adjoint = [], direct.forward, direct.weight_adjoint
    monkeypatch.setattr(algorithm.direct, "forward", lambda *a: calls.append("sum") or forward(*a))
    monkeypatch.setattr(algorithm.direct, "weight_adjoint",
                        lambda *a: calls.append("weight") or weight_adjoint(*a))
    x, w, b = _arrays(case, "float32")
    grad = np.random.default_rng(1).standard_normal(_torch(x, w, b, case[5]).shape).astype(np.float32)
    with threadpool_limits(1, user_api="blas"):
        ours = _results(ember, x, w, b, grad, case[5])
    theirs = _results(torch, x, w, b, grad, case[5])
    served = direct.kernel_of(direct.DIRECT_CONV3X3, np) is not direct.DIRECT_CONV3X3.generic
    whole_segments = (case[3] + 2 * case[5][1] - 2) % direct.SEGMENT == 0
    # the output and the input's gradient, and the weight's on whole segments
    assert calls == (["sum", "sum"] + ["weight"] * whole_segments if served else [])
    for got, expected in zip(ours, theirs):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
