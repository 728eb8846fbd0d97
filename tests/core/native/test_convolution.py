"""The NCHW im2col backward of ember/native/convolution.py: its input and weight
gradients read one channel-major copy of the output gradient, and the results equal
torch's."""

import numpy as np
import pytest
import torch

import ember
from ember.native import convolution


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
