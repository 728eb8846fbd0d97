"""The NCHW im2col backward of ember/native/convolution.py: its input and weight
gradients read one channel-major copy of the output gradient, and the results equal
torch's."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.native import convolution
from ember.native import convolution_phases as phases


@pytest.mark.parametrize("stride, padding", [(1, 1), (2, 0), (2, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_transposes_the_output_gradient_once(monkeypatch, stride, padding, dtype):
    calls = []
    transpose = convolution._channel_major

    def counted(image, groups):
        calls.append(image.shape)
        return transpose(image, groups)

    monkeypatch.setattr(convolution, "_channel_major", counted)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 9)).astype(dtype)
    w = rng.standard_normal((5, 3, 3, 3)).astype(dtype)
    g = rng.standard_normal(torch.conv2d(torch.tensor(x), torch.tensor(w), stride=stride,
                                         padding=padding).shape).astype(dtype)
    grads = {}
    for lib in (ember, torch):
        X, W = lib.tensor(x).requires_grad_(), lib.tensor(w).requires_grad_()
        B = lib.zeros(5, dtype=W.dtype).requires_grad_()
        lib.nn.functional.conv2d(X, W, B, stride=stride, padding=padding).backward(lib.tensor(g))
        grads[lib.__name__] = [t.grad.detach().numpy() for t in (X, W, B)]
    assert calls == [g.shape]  # O > C: the stride-1 input adjoint is col2im here too
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for got, expected in zip(grads["ember"], grads["torch"]):
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


# (N, C, O, H, W, stride, padding, dilation, groups, bias): odd sizes, batch 1, stride 3
# and unequal strides, dilation, a phase no tap reaches (stride 3 with a 2x2 kernel)
STRIDED = [
    (2, 3, 5, 7, 9, 2, 1, 1, 1, True),
    (1, 3, 4, 8, 9, 2, 0, 1, 1, False),
    (2, 2, 3, 10, 11, 3, 2, 1, 1, True),
    (2, 4, 3, 9, 12, (2, 3), (1, 0), 1, 1, False),
    (1, 3, 2, 13, 11, 2, 1, 2, 1, True),
    (2, 2, 3, 9, 10, 3, 0, 1, 1, True, (2, 2)),
    (2, 4, 6, 9, 9, 2, 1, 1, 2, True),  # groups: col2im
]


def _strided_grads(lib, x, w, b, g, stride, padding, dilation, groups):
    X, W = lib.tensor(x).requires_grad_(), lib.tensor(w).requires_grad_()
    B = None if b is None else lib.tensor(b).requires_grad_()
    y = lib.nn.functional.conv2d(X, W, B, stride=stride, padding=padding, dilation=dilation, groups=groups)
    y.backward(lib.tensor(g))
    return [y.detach().numpy()] + [t.grad.numpy() for t in (X, W, B) if t is not None]


@pytest.mark.parametrize("case", STRIDED)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_strided_input_gradient_by_phases_matches_torch_and_col2im(monkeypatch, case, dtype):
    N, C, O, H, W, stride, padding, dilation, groups, bias = case[:10]
    kernel = case[10] if len(case) > 10 else (3, 3)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C // groups) + kernel).astype(dtype)
    b = rng.standard_normal(O).astype(dtype) if bias else None
    shape = torch.conv2d(torch.tensor(x), torch.tensor(w), stride=stride, padding=padding, dilation=dilation,
                         groups=groups).shape
    g = rng.standard_normal(shape).astype(dtype)
    arguments = (x, w, b, g, stride, padding, dilation, groups)
    expected = _strided_grads(torch, *arguments)
    calls = []
    by_phases = phases.input_adjoint_by_phases
    monkeypatch.setattr(phases, "input_adjoint_by_phases", lambda *a: calls.append(1) or by_phases(*a))
    got = _strided_grads(ember, *arguments)
    assert len(calls) == (groups == 1)
    tolerance = 2e-5 if dtype == "float32" else 1e-12
    for mine, theirs in zip(got, expected):
        np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)
    assert got[1].strides == expected[1].strides
    # against the path it replaced: col2im of the column matrix
    monkeypatch.setattr(phases, "input_adjoint_by_phases", lambda xp, grad, weight, geometry: (
        convolution._input_adjoint(xp, convolution._channel_major(grad, 1), weight, geometry.N, geometry, 1)))
    np.testing.assert_allclose(got[1], _strided_grads(ember, *arguments)[1], rtol=tolerance, atol=tolerance)


def test_strided_input_gradient_by_phases_has_gradients_of_its_own():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((1, 2, 7, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    assert gradgradcheck(lambda x, w: ember.nn.functional.conv2d(x, w, stride=2, padding=1), (x, w))
    assert gradcheck(lambda x, w: ember.nn.functional.conv2d(x, w, stride=(3, 2)), (x, w))


# 1x1, stride 1, no padding, one group: NOTE [ The 1x1 convolution in NCHW ].
POINTWISE_CASES = [((2, 3, 5, 7), 4), ((1, 16, 8, 8), 8), ((0, 3, 4, 4), 2), ((3, 1, 1, 1), 5), ((2, 4, 6, 6), 2)]


@pytest.mark.parametrize("shape, out_channels", POINTWISE_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_pointwise_convolution_as_torch(shape, out_channels, dtype, bias, noncontiguous):
    from ember.testing import assert_parity

    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((out_channels, shape[1], 1, 1)).astype(dtype)
    b = [rng.standard_normal(out_channels).astype(dtype)] if bias else []
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    out, expected = assert_parity(lambda lib, *t: lib.nn.functional.conv2d(*t), x, w, *b,
                                  noncontiguous=noncontiguous, rtol=tolerance, atol=tolerance)
    assert out.stride() == expected.stride()


def test_pointwise_convolution_equals_the_im2col_path():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 5, 4)).astype(np.float32)[:, ::2]  # a channel slice
    w = rng.standard_normal((7, 3, 1, 1)).astype(np.float32)
    g = convolution._geometry(x.shape, w.shape, (1, 1), (0, 0), (1, 1))
    im2col = convolution._image(np, convolution._forward(np, x, w, g, 1), x.shape[0], g)
    np.testing.assert_allclose(convolution._pointwise_forward(np, x, w), im2col, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs, taken", [({}, True), ({"stride": 2}, False), ({"padding": 1}, False),
                                           ({"groups": 2}, False)])
def test_only_an_unpadded_stride_one_ungrouped_1x1_takes_the_pointwise_path(monkeypatch, kwargs, taken):
    calls = []
    pointwise = convolution._pointwise_forward
    monkeypatch.setattr(convolution, "_pointwise_forward", lambda *a: calls.append(1) or pointwise(*a))
    x, w = ember.randn(2, 4, 5, 5), ember.randn(6, 4 // kwargs.get("groups", 1), 1, 1)
    ember.nn.functional.conv2d(x, w, **kwargs)
    assert bool(calls) == taken
