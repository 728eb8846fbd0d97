"""Winograd F(2x2, 3x3) and F(4x4, 3x3) kernels (ember/native/convolution/winograd.py) against torch:
the forward convolution and the weight's gradient, in NCHW and channels_last, on odd
shapes (batch 1, one channel, sizes that are not multiples of the tiles, padding 0, 1
and 2), float64 to rounding and float32 within the bounds the module's NOTE states;
each test runs with the transforms' installed cpu kernels and with the NumPy ones
(the ``winograd_transforms`` fixture)."""

import numpy as np
import pytest
import torch

from ember.native.convolution import winograd

pytestmark = pytest.mark.usefixtures("winograd_transforms")

TILES = [2, 4]
CASES = [  # (N, C, O, H, W, padding)
    (1, 1, 1, 3, 3, 0),
    (2, 3, 5, 7, 9, 1),
    (1, 4, 6, 10, 5, 0),
    (2, 2, 4, 5, 11, 2),
    (3, 5, 3, 8, 8, 1),
]
# float32 error relative to the output's largest magnitude (NOTE [ Winograd F(4x4, 3x3) ]).
FLOAT32_BOUND = {2: 2e-6, 4: 5e-5}


def _arrays(case, dtype, channels_last, seed=0):
    N, C, O, H, W, padding = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C, 3, 3)).astype(dtype)
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    return x, w, padding


def _torch_conv(x, w, padding):
    xt = torch.tensor(np.ascontiguousarray(x), requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    y = torch.nn.functional.conv2d(xt, wt, padding=padding)
    grad = torch.tensor(np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(x.dtype))
    y.backward(grad)
    return y.detach().numpy(), grad.numpy(), wt.grad.numpy()


def _relative(got, expected):
    return np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30)


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("m", TILES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_forward_and_weight_gradient_match_torch_in_float64(case, m, channels_last):
    x, w, padding = _arrays(case, np.float64, channels_last)
    expected, grad, expected_dw = _torch_conv(x, w, padding)
    if channels_last:
        grad = np.ascontiguousarray(grad.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y = winograd.conv2d(np, x, winograd.winograd_weight(w, m), (padding, padding), m, channels_last)
    dw = winograd.weight_grad(np, x, grad, (padding, padding), m, channels_last)
    np.testing.assert_allclose(y, expected, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(dw, expected_dw, rtol=1e-11, atol=1e-11)
    # the layouts eager convolution promises: C-contiguous, or channels_last
    layout = (0, 2, 3, 1) if channels_last else (0, 1, 2, 3)
    assert y.transpose(layout).flags.c_contiguous and dw.transpose(layout).flags.c_contiguous


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("m", TILES)
def test_float32_rounding_stays_within_the_stated_bound(m, channels_last):
    x, w, padding = _arrays((4, 64, 64, 16, 16, 1), np.float32, channels_last)
    w = w / np.sqrt(64 * 9)
    expected, grad, expected_dw = _torch_conv(x.astype(np.float64), w.astype(np.float64), padding)
    grad = grad.astype(np.float32)
    if channels_last:
        grad = np.ascontiguousarray(grad.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y = winograd.conv2d(np, x, winograd.winograd_weight(w, m), (1, 1), m, channels_last)
    dw = winograd.weight_grad(np, x, grad, (1, 1), m, channels_last)
    assert y.dtype == dw.dtype == np.float32
    assert _relative(y, expected) < FLOAT32_BOUND[m]
    assert _relative(dw, expected_dw) < FLOAT32_BOUND[m]


@pytest.mark.parametrize("m", TILES)
def test_transformed_weight_is_g_w_g_transposed(m):
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 3))
    g = winograd.MATRICES[m][1]
    alpha = m + 2
    u = winograd.winograd_weight(w, m).reshape(alpha, alpha, 2, 3)
    for o in range(3):
        for c in range(2):
            np.testing.assert_allclose(u[:, :, c, o], g @ w[o, c] @ g.T, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_transformed_weight_made_in_chunks_is_the_whole_one(dtype, monkeypatch):
    # 7 output channels of 5 inputs, chunks of 2 channels (the last one short), a
    # transposed view as the weight: each chunk must land on its own columns
    w = np.random.default_rng(2).standard_normal((3, 3, 5, 7)).astype(dtype).transpose(3, 2, 0, 1)
    whole = winograd.winograd_weight(w, 4)
    monkeypatch.setattr(winograd, "WEIGHT_CHUNK", 2 * 5 * 36)
    chunked = winograd.winograd_weight(w, 4)
    assert chunked.dtype == dtype and chunked.flags.c_contiguous
    np.testing.assert_array_equal(chunked, whole)


def test_winograd_applies_to_3x3_stride_1_undilated_ungrouped_only():
    assert winograd.applies((8, 4, 3, 3), (1, 1), (1, 1), 1)
    assert not winograd.applies((8, 4, 3, 3), (2, 2), (1, 1), 1)
    assert not winograd.applies((8, 4, 3, 3), (1, 1), (2, 2), 1)
    assert not winograd.applies((8, 2, 3, 3), (1, 1), (1, 1), 2)
    assert not winograd.applies((8, 4, 5, 5), (1, 1), (1, 1), 1)
    assert winograd.tile_size("winograd_4x4") == 4 and winograd.tile_size("winograd_2x2") == 2
