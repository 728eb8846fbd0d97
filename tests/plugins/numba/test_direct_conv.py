"""ember-numba's register-blocked direct 3x3 convolution for core's
``native::direct_conv3x3_into`` and ``native::direct_conv3x3_weight``: registered for
the cpu, the NumPy kernels' results bit for bit (odd sizes, every border, channel
counts off the block and rows off the segment, so the overlapping last block and
segment, an odd count of output channels for the weight's pairs, signed zeros,
infinities and NaN), torch's convolution and weight gradient in value, and the NumPy
kernels for what the loops do not take.

Tests for plugins/numba/src/ember_numba/direct_conv.py (PyTorch counterpart: oneDNN's
direct convolution, aten/src/ATen/native/mkldnn/Conv.cpp, v2.13).
"""

import numpy as np
import pytest
import torch

import ember
from ember.native.convolution import direct
from ember_numba import direct_conv as compiled
from ember_numba import direct_conv_loops
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

# (N, C, H, W, O, padding)
CASES = [
    (2, 16, 12, 32, 16, (1, 1)),
    (3, 9, 7, 19, 13, (1, 1)),
    (2, 1, 6, 18, 8, (0, 0)),
    (1, 10, 1, 19, 11, (1, 0)),
    (2, 3, 4, 16, 9, (2, 2)),
    (1, 5, 3, 14, 20, (0, 2)),
]


def _arrays(case, seed=0, special=False):
    N, C, H, W, O, (ph, pw) = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    if special:
        size = min(64, x.size)
        x.reshape(-1)[:size] = values(rng, size, np.float32)
    w, b = rng.standard_normal((O, C, 3, 3)).astype(np.float32), rng.standard_normal(O).astype(np.float32)
    return x, w, b, (N, O, H + 2 * ph - 2, W + 2 * pw - 2)


def test_it_serves_core_direct_convolution_on_the_cpu():
    ember.nn.functional.conv2d  # builds the catalogues, which runs ember-numba's hook
    ember.zeros(1) + 1
    assert direct.DIRECT_CONV3X3.kernel_for("cpu") is compiled.compiled_conv3x3_into
    assert direct.DIRECT_CONV3X3.generic is direct.conv3x3_into
    assert direct.DIRECT_CONV3X3_WEIGHT.kernel_for("cpu") is compiled.compiled_conv3x3_weight
    assert direct.DIRECT_CONV3X3_WEIGHT.generic is direct.conv3x3_weight


def test_the_loops_block_as_core_says():
    assert (direct_conv_loops.BLOCK, direct_conv_loops.SEGMENT) == (direct.BLOCK, direct.SEGMENT)


@pytest.mark.parametrize("special", [False, True], ids=["normal", "zeros infinities nan"])
@pytest.mark.parametrize("case", CASES)
def test_the_compiled_loops_give_the_numpy_kernels_bits(case, special, monkeypatch):
    x, w, b, shape = _arrays(case, special=special)
    if case[4] == 16:
        x = x.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2)  # any strides
    expected = np.full(shape, 7, dtype=np.float32)  # every entry must be written
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as in the loops
        direct.conv3x3_into(np, x, w, b, expected, case[5])
    monkeypatch.setattr(compiled, "conv3x3_into", no_fallback)
    got = np.full(shape, 9, dtype=np.float32)
    compiled.compiled_conv3x3_into(np, x, w, b, got, case[5])
    assert_same_bits((got,), (expected,))


@pytest.mark.parametrize("case", CASES)
def test_it_is_torchs_convolution(case):
    x, w, b, shape = _arrays(case)
    got = np.empty(shape, dtype=np.float32)
    compiled.compiled_conv3x3_into(np, x, w, b, got, case[5])
    reference = torch.nn.functional.conv2d(*(torch.tensor(a, dtype=torch.float64) for a in (x, w, b)),
                                           padding=case[5]).numpy()
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arrays", ["float64", "few output channels", "short rows", "strided output", "mixed dtypes"])
def test_arrays_it_does_not_take_go_to_the_numpy_kernel(arrays, monkeypatch):
    case = {"few output channels": (2, 3, 5, 18, 7, (1, 1)), "short rows": (2, 3, 5, 15, 8, (1, 1))}.get(
        arrays, CASES[1])
    x, w, b, shape = _arrays(case)
    if arrays == "float64":
        x, w, b = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64)
    elif arrays == "mixed dtypes":
        w = w.astype(np.float64)
    out = np.zeros(shape, dtype=x.dtype)
    if arrays == "strided output":
        out = np.zeros(shape[:3] + (2 * shape[3],), dtype=x.dtype)[..., ::2]
    calls = []
    monkeypatch.setattr(compiled, "conv3x3_into", lambda *a: calls.append(1) or direct.conv3x3_into(*a))
    compiled.compiled_conv3x3_into(np, x, w, b, out, case[5])
    expected = np.zeros(shape, dtype=x.dtype)
    direct.conv3x3_into(np, x, w, b, expected, case[5])
    np.testing.assert_array_equal(out, expected)
    assert calls == [1]


# (N, C, H, W, O, padding) with rows a whole number of segments: one and two
# segments, an odd count of output channels (the last pair starts early), two, every
# border
WEIGHT_CASES = [
    (2, 3, 5, 16, 9, (1, 1)),
    (3, 8, 4, 18, 2, (0, 0)),
    (1, 5, 7, 30, 3, (2, 2)),
    (2, 4, 3, 32, 8, (1, 1)),
    (1, 1, 1, 18, 5, (1, 0)),
]


def _weight_arrays(case, special=False):
    x, _, _, shape = _arrays(case, special=special)
    grad = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    return x, grad


@pytest.mark.parametrize("special", [False, True], ids=["normal", "zeros infinities nan"])
@pytest.mark.parametrize("case", WEIGHT_CASES)
def test_the_compiled_weight_gradient_gives_the_numpy_kernels_bits(case, special, monkeypatch):
    x, grad = _weight_arrays(case, special)
    if case[4] == 9:
        x = x.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2)  # any strides
    with np.errstate(invalid="ignore"):
        expected = direct.conv3x3_weight(np, x, grad, case[5])
    monkeypatch.setattr(compiled, "conv3x3_weight", no_fallback)
    assert_same_bits((compiled.compiled_conv3x3_weight(np, x, grad, case[5]),), (expected,))


@pytest.mark.parametrize("case", WEIGHT_CASES)
def test_it_is_torchs_weight_gradient(case):
    x, grad = _weight_arrays(case)
    got = compiled.compiled_conv3x3_weight(np, x, grad, case[5])
    reference = torch.nn.grad.conv2d_weight(torch.tensor(x, dtype=torch.float64), got.shape,
                                            torch.tensor(grad, dtype=torch.float64), padding=case[5]).numpy()
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arrays", ["float64", "one output channel", "rows off the segment", "mixed dtypes"])
def test_weight_gradients_it_does_not_take_go_to_the_numpy_kernel(arrays, monkeypatch):
    case = {"one output channel": (2, 3, 5, 18, 1, (1, 1)), "rows off the segment": (2, 3, 5, 19, 8, (1, 1))}.get(
        arrays, WEIGHT_CASES[0])
    x, grad = _weight_arrays(case)
    if arrays == "float64":
        x, grad = x.astype(np.float64), grad.astype(np.float64)
    elif arrays == "mixed dtypes":
        grad = grad.astype(np.float64)
    calls = []
    monkeypatch.setattr(compiled, "conv3x3_weight", lambda *a: calls.append(1) or direct.conv3x3_weight(*a))
    got = compiled.compiled_conv3x3_weight(np, x, grad, case[5])
    np.testing.assert_array_equal(got, direct.conv3x3_weight(np, x, grad, case[5]))
    assert calls == [1]
