"""ember-numba's compiled im2col and col2im for core's ``native::im2col_into`` and
``native::col2im_add``: registered for the cpu, the NumPy kernels' results bit for bit
on every geometry (padding, stride, dilation, a padding past the kernel, odd sizes),
torch's unfold and fold, the NumPy kernels for arrays they do not take, and a
convolution whose values and gradients are torch's with the compiled kernels and with
the NumPy ones.

Tests for plugins/numba/src/ember_numba/im2col.py (PyTorch counterpart:
aten/src/ATen/native/im2col.h, v2.13).
"""


import numpy as np
import pytest
import torch

import ember
from ember.native.fold import COL2IM_ADD, IM2COL_INTO, Geometry, col2im_add, im2col_into
from ember_numba import im2col as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback

# (n, C, H, W, kernel, stride, padding, dilation): a 3x3 "same" (the shifted rows),
# stride 2 and unequal strides, dilation, 1x1, a kernel as large as the padded image,
# padding past the kernel's reach (rows of zeros), rectangular kernels and images
GEOMETRIES = [
    (2, 3, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1)),
    (3, 2, 5, 9, (3, 2), (2, 1), (0, 1), (1, 2)),
    (1, 1, 4, 4, (1, 1), (1, 1), (0, 0), (1, 1)),
    (2, 3, 6, 5, (3, 3), (1, 1), (2, 3), (2, 1)),
    (2, 2, 9, 8, (5, 3), (3, 2), (2, 1), (1, 1)),
    (1, 2, 5, 5, (3, 3), (1, 1), (0, 0), (1, 1)),
    (2, 3, 8, 8, (3, 3), (2, 2), (1, 1), (1, 1)),
    (1, 2, 3, 3, (3, 3), (1, 1), (4, 4), (1, 1)),
    (2, 4, 1, 11, (1, 5), (1, 1), (0, 2), (1, 1)),
    (1, 1, 2, 2, (4, 4), (1, 1), (1, 1), (1, 1)),
]


def _geometry(case):
    n, C, H, W, kernel, stride, padding, dilation = case
    return Geometry((n, C, H, W), kernel, stride, padding, dilation)


def _arrays(case, dtype):
    n, C, H, W = case[:4]
    g = _geometry(case)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((n, C, H, W)).astype(dtype)
    columns = rng.standard_normal((C * g.kh * g.kw, n * g.L)).astype(dtype)
    return g, images, columns


def test_it_serves_core_im2col_and_col2im_on_the_cpu():
    ember.nn.functional.conv2d  # builds the catalogues, which runs ember-numba's hook
    ember.zeros(1) + 1
    assert IM2COL_INTO.kernel_for("cpu") is compiled.compiled_im2col_into
    assert COL2IM_ADD.kernel_for("cpu") is compiled.compiled_col2im_add
    assert IM2COL_INTO.generic is im2col_into and COL2IM_ADD.generic is col2im_add


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_the_compiled_loops_give_the_numpy_kernels_bits(case, dtype, monkeypatch):
    g, images, columns = _arrays(case, dtype)
    expected = np.full(columns.shape, 7, dtype=dtype)  # every entry must be written
    im2col_into(np, images, expected, g)
    added = images.copy()
    col2im_add(np, columns, added, g)
    monkeypatch.setattr(compiled, "im2col_into", no_fallback)
    monkeypatch.setattr(compiled, "col2im_add", no_fallback)
    got = np.full(columns.shape, 9, dtype=dtype)
    compiled.compiled_im2col_into(np, images, got, g)
    got_added = images.copy()
    compiled.compiled_col2im_add(np, columns, got_added, g)
    assert_same_bits((got, got_added), (expected, added))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_they_are_torch_unfold_and_fold(case, dtype):
    g, images, columns = _arrays(case, dtype)
    attrs = dict(kernel_size=case[4], stride=case[5], padding=case[6], dilation=case[7])
    got = np.empty_like(columns)
    compiled.compiled_im2col_into(np, images, got, g)
    unfolded = torch.nn.functional.unfold(torch.tensor(images), **attrs)  # (n, K, L)
    np.testing.assert_array_equal(got, unfolded.permute(1, 0, 2).reshape(columns.shape).numpy())
    per_image = torch.tensor(columns).reshape(columns.shape[0], images.shape[0], g.L).permute(1, 0, 2)
    folded = torch.nn.functional.fold(per_image, (g.H, g.W), **attrs).numpy()
    got_added = np.zeros_like(images)
    compiled.compiled_col2im_add(np, columns, got_added, g)
    tolerance = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(got_added, folded, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("arrays", ["float16", "transposed images", "strided columns", "mixed dtypes", "empty"])
def test_arrays_it_does_not_take_go_to_the_numpy_kernels(arrays, monkeypatch):
    case = GEOMETRIES[0]
    g, images, columns = _arrays(case, "float32")
    if arrays == "float16":
        images, columns = images.astype(np.float16), columns.astype(np.float16)
    elif arrays == "transposed images":
        images = np.ascontiguousarray(images.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    elif arrays == "strided columns":
        columns = np.repeat(columns, 2, axis=1)[:, ::2]
    elif arrays == "mixed dtypes":
        columns = columns.astype(np.float64)
    else:
        images, columns = images[:0], columns[:, :0]
    calls = []
    monkeypatch.setattr(compiled, "im2col_into", lambda *a: calls.append("im2col") or im2col_into(*a))
    monkeypatch.setattr(compiled, "col2im_add", lambda *a: calls.append("col2im") or col2im_add(*a))
    expected = np.zeros(columns.shape, columns.dtype)
    if arrays != "strided columns":  # the NumPy kernel writes into C-contiguous columns only
        compiled.compiled_im2col_into(np, images, columns, g)
        im2col_into(np, images, expected, g)
        np.testing.assert_array_equal(columns, expected)
    target, expected_image = np.zeros_like(images), np.zeros_like(images)  # in the images' layout
    compiled.compiled_col2im_add(np, columns, target, g)
    col2im_add(np, columns, expected_image, g)
    np.testing.assert_array_equal(target, expected_image)
    assert calls == (["col2im"] if arrays == "strided columns" else ["im2col", "col2im"])


def _conv_results(lib, x, w, b, attrs):
    X, W, B = (lib.tensor(a).requires_grad_() for a in (x, w, b))
    y = lib.nn.functional.conv2d(X, W, B, **attrs)
    y.backward(lib.ones_like(y) * 0.5)
    return [t.detach().numpy() for t in (y, X.grad, W.grad, B.grad)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("attrs", [dict(padding=1), dict(stride=2, padding=1), dict(padding=2, dilation=2)])
def test_a_convolution_is_torchs_with_the_compiled_kernels_and_with_numpys(attrs, dtype, monkeypatch):
    from threadpoolctl import threadpool_limits

    from ember.native.convolution import images as convolution_images

    monkeypatch.setattr(convolution_images, "MIN_CHUNK_PIXELS", 1)  # 9x11 maps count as large
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 9, 11)).astype(dtype)  # odd sizes: more than one image per chunk
    w = rng.standard_normal((7, 5, 3, 3)).astype(dtype)
    b = rng.standard_normal(7).astype(dtype)
    expected = _conv_results(torch, x, w, b, attrs)
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    calls = []
    for op in (IM2COL_INTO, COL2IM_ADD):
        kernel = op.kernel_for("cpu")
        monkeypatch.setitem(op.kernels, "cpu", lambda *a, _kernel=kernel: calls.append(1) or _kernel(*a))
        monkeypatch.setattr(op, "_resolved", {})  # the op resolves its kernel again
    with threadpool_limits(limits=1, user_api="blas"):  # a few images at a time only on one thread
        compiled_results = _conv_results(ember, x, w, b, attrs)
        assert calls  # the convolution ran on the compiled kernels
        for op in (IM2COL_INTO, COL2IM_ADD):
            monkeypatch.setitem(op.kernels, "cpu", op.generic)
            monkeypatch.setattr(op, "_resolved", {})
        numpy_results = _conv_results(ember, x, w, b, attrs)
    for got, numpy_got, want in zip(compiled_results, numpy_results, expected):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        np.testing.assert_array_equal(got, numpy_got)  # the kernels agree bit for bit
