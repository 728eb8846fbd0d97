"""ember-numba's compiled NHWC gather and col2im for core's ``native::nhwc_rows_into``
and ``native::nhwc_col2im_add``: registered for the cpu, the NumPy kernels' results bit
for bit on every geometry (padding, stride, dilation, groups, a padding past the
kernel, odd sizes), torch's unfold and fold, the NumPy kernels for arrays they do not
take, and a channels_last convolution whose values and gradients are torch's with the
compiled kernels and with the NumPy ones.

Tests for plugins/numba/src/ember_numba/nhwc_im2col.py (PyTorch counterpart:
aten/src/ATen/native/im2col.h, v2.13).
"""


import numpy as np
import pytest
import torch

import ember
from ember.native.convolution_channels_last import (
    NHWC_COL2IM_ADD,
    NHWC_ROWS_INTO,
    nhwc_col2im_add,
    nhwc_rows_into,
)
from ember.native.fold import Geometry
from ember_numba import nhwc_im2col as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback

# (n, C, H, W, kernel, stride, padding, dilation, groups): a 3x3 "same" and the
# 3-channel stem, stride 2, unequal strides with dilation, groups (depthwise too), a
# kernel as large as the padded image, padding past the kernel's reach (rows of
# zeros), rectangular kernels and images
GEOMETRIES = [
    (2, 3, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (3, 4, 9, 8, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    (3, 2, 5, 9, (3, 2), (2, 1), (0, 1), (1, 2), 1),
    (2, 6, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 2),
    (2, 4, 5, 5, (3, 3), (2, 2), (1, 1), (1, 1), 4),
    (2, 3, 6, 5, (3, 3), (1, 1), (2, 3), (2, 1), 3),
    (2, 2, 9, 8, (5, 3), (3, 2), (2, 1), (1, 1), 1),
    (1, 2, 3, 3, (3, 3), (1, 1), (4, 4), (1, 1), 1),
    (1, 1, 2, 2, (4, 4), (1, 1), (1, 1), (1, 1), 1),
]


def _arrays(case, dtype):
    n, C, H, W, kernel, stride, padding, dilation, groups = case
    g = Geometry((n, C, H, W), kernel, stride, padding, dilation)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, H, W, C)).astype(dtype).transpose(0, 3, 1, 2)  # channels_last
    grads = rng.standard_normal((groups, n, g.OH, g.OW, g.kh, g.kw, C // groups)).astype(dtype)
    image = rng.standard_normal((n, H, W, groups, C // groups)).astype(dtype)
    return g, groups, x, grads, image


def test_it_serves_core_nhwc_gather_and_col2im_on_the_cpu():
    ember.nn.functional.conv2d  # builds the catalogues, which runs ember-numba's hook
    ember.zeros(1) + 1
    assert NHWC_ROWS_INTO.kernel_for("cpu") is compiled.compiled_nhwc_rows_into
    assert NHWC_COL2IM_ADD.kernel_for("cpu") is compiled.compiled_nhwc_col2im_add
    assert NHWC_ROWS_INTO.generic is nhwc_rows_into and NHWC_COL2IM_ADD.generic is nhwc_col2im_add


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_the_compiled_loops_give_the_numpy_kernels_bits(case, dtype, monkeypatch):
    g, groups, x, grads, image = _arrays(case, dtype)
    expected = np.full(grads.shape, 7, dtype=dtype)  # every entry must be written
    nhwc_rows_into(np, x, expected, g, groups)
    added = image.copy()
    nhwc_col2im_add(np, grads, added, g, groups)
    monkeypatch.setattr(compiled, "nhwc_rows_into", no_fallback)
    monkeypatch.setattr(compiled, "nhwc_col2im_add", no_fallback)
    got = np.full(grads.shape, 9, dtype=dtype)
    compiled.compiled_nhwc_rows_into(np, x, got, g, groups)
    got_added = image.copy()
    compiled.compiled_nhwc_col2im_add(np, grads, got_added, g, groups)
    assert_same_bits((got, got_added), (expected, added))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_they_are_torch_unfold_and_fold(case, dtype):
    g, groups, x, grads, _ = _arrays(case, dtype)
    n, C = x.shape[:2]
    attrs = dict(kernel_size=case[4], stride=case[5], padding=case[6], dilation=case[7])
    got = np.empty_like(grads)
    compiled.compiled_nhwc_rows_into(np, x, got, g, groups)
    unfolded = torch.nn.functional.unfold(torch.tensor(x), **attrs)  # (n, C*kh*kw, L)
    by_tap = unfolded.reshape(n, groups, C // groups, g.kh, g.kw, g.OH, g.OW).permute(1, 0, 5, 6, 3, 4, 2)
    np.testing.assert_array_equal(got, by_tap.numpy())
    columns = torch.tensor(grads).permute(1, 0, 6, 4, 5, 2, 3).reshape(n, C * g.kh * g.kw, g.L)
    folded = torch.nn.functional.fold(columns, (g.H, g.W), **attrs).numpy()
    got_added = np.zeros((n, g.H, g.W, groups, C // groups), dtype=dtype)
    compiled.compiled_nhwc_col2im_add(np, grads, got_added, g, groups)
    tolerance = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(got_added.reshape(n, g.H, g.W, C).transpose(0, 3, 1, 2), folded,
                               rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("arrays", ["float16", "NCHW image", "strided grads", "mixed dtypes", "empty"])
def test_arrays_it_does_not_take_go_to_the_numpy_kernels(arrays, monkeypatch):
    g, groups, x, grads, image = _arrays(GEOMETRIES[0], "float32")
    if arrays == "float16":
        x, grads, image = x.astype(np.float16), grads.astype(np.float16), image.astype(np.float16)
    elif arrays == "NCHW image":
        x = np.ascontiguousarray(x)
    elif arrays == "strided grads":
        grads = np.repeat(grads, 2, axis=-1)[..., ::2]
    elif arrays == "mixed dtypes":
        grads = grads.astype(np.float64)
    else:
        x, grads, image = x[:0], grads[:, :0], image[:0]
        g = Geometry(x.shape, (g.kh, g.kw), (g.sh, g.sw), (g.ph, g.pw), (g.dh, g.dw))
    calls = []
    monkeypatch.setattr(compiled, "nhwc_rows_into", lambda *a: calls.append("rows") or nhwc_rows_into(*a))
    monkeypatch.setattr(compiled, "nhwc_col2im_add", lambda *a: calls.append("col2im") or nhwc_col2im_add(*a))
    if arrays not in ("strided grads", "mixed dtypes"):  # the rows buffer is C-contiguous, x's dtype
        got, expected = np.zeros(grads.shape, x.dtype), np.zeros(grads.shape, x.dtype)
        compiled.compiled_nhwc_rows_into(np, x, got, g, groups)
        nhwc_rows_into(np, x, expected, g, groups)
        np.testing.assert_array_equal(got, expected)
    target, expected_image = np.zeros_like(image), np.zeros_like(image)
    compiled.compiled_nhwc_col2im_add(np, grads, target, g, groups)
    nhwc_col2im_add(np, grads, expected_image, g, groups)
    np.testing.assert_array_equal(target, expected_image)
    falls_back = {"strided grads": ["col2im"], "mixed dtypes": ["col2im"], "NCHW image": ["rows"]}
    assert calls == falls_back.get(arrays, ["rows", "col2im"])


def _conv_results(lib, x, w, b, attrs):
    X = lib.tensor(x).contiguous(memory_format=lib.channels_last).requires_grad_()
    W, B = (lib.tensor(a).requires_grad_() for a in (w, b))
    y = lib.nn.functional.conv2d(X, W, B, **attrs)
    y.backward(lib.ones_like(y) * 0.5)
    return [t.detach().numpy() for t in (y, X.grad, W.grad, B.grad)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("attrs", [dict(padding=1), dict(stride=2, padding=1), dict(padding=2, dilation=2),
                                   dict(stride=2, padding=1, groups=2)])
def test_a_channels_last_convolution_is_torchs_with_the_compiled_kernels_and_with_numpys(attrs, dtype,
                                                                                         monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 9, 11)).astype(dtype)  # odd sizes
    w = rng.standard_normal((8, 6 // attrs.get("groups", 1), 3, 3)).astype(dtype)
    b = rng.standard_normal(8).astype(dtype)
    expected = _conv_results(torch, x, w, b, attrs)
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    compiled_results = _conv_results(ember, x, w, b, attrs)
    for op in (NHWC_ROWS_INTO, NHWC_COL2IM_ADD):
        monkeypatch.setitem(op.kernels, "cpu", op.generic)
        monkeypatch.setattr(op, "_resolved", {})  # the op resolves its kernel again
    numpy_results = _conv_results(ember, x, w, b, attrs)
    for got, numpy_got, want in zip(compiled_results, numpy_results, expected):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        np.testing.assert_array_equal(got, numpy_got)  # the kernels agree bit for bit
