"""ember-numba's compiled NHWC gather and col2im for core's ``native::nhwc_rows_into``
and ``native::nhwc_col2im_add``: registered for the cpu, the NumPy kernels' results bit
for bit on every geometry (padding, stride, dilation, groups, a padding past the
kernel, odd sizes), torch's unfold and fold, the NumPy kernels for arrays they do not
take, the gather from NCHW, broadcast and strided images, and convolutions (channels_last
with channels_last, NCHW and broadcast gradients; an NCHW small map) whose values and
gradients are torch's with the compiled kernels and with the NumPy ones.

Tests for plugins/numba/src/ember_numba/nhwc_im2col.py (PyTorch counterpart:
aten/src/ATen/native/im2col.h, v2.13).
"""


import numpy as np
import pytest
import torch

import ember
from ember.native.convolution.channels_last import (
    NHWC_COL2IM_ADD,
    NHWC_ROWS_INTO,
    nhwc_col2im_add,
    nhwc_rows_into,
)
from ember.native.fold import Geometry
from ember_numba import nhwc_im2col as compiled
from tests.plugins.numba.kernel_bits import assert_same_bits, no_fallback, values

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


# the images the gather reads besides channels_last ones: an NCHW map (a small NCHW
# map's forward, an NCHW output gradient's stride-1 input adjoint), one value
# broadcast (the gradient of a sum), a slice of a channels_last map, an odd stride
LAYOUTS = {
    "NCHW": lambda x: np.ascontiguousarray(x),
    "broadcast": lambda x: np.broadcast_to(x[:1, :1, :1, :1], x.shape),
    "sliced channels_last": lambda x: np.concatenate([x, x], axis=2)[:, :, ::2],
    "every other element": lambda x: np.repeat(x, 2, axis=-1)[..., ::2],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", GEOMETRIES[:6])
def test_it_gathers_from_other_layouts_with_the_numpy_kernels_bits(case, layout, dtype, monkeypatch):
    g, groups, x, grads, _ = _arrays(case, dtype)
    x = LAYOUTS[layout](values(np.random.default_rng(1), x.size, dtype).reshape(x.shape))  # -0.0, inf, NaN
    assert not x.transpose(0, 2, 3, 1).flags.c_contiguous  # not the channels_last case
    expected = np.full(grads.shape, 7, dtype=dtype)
    nhwc_rows_into(np, x, expected, g, groups)
    monkeypatch.setattr(compiled, "nhwc_rows_into", no_fallback)
    got = np.full(grads.shape, 9, dtype=dtype)
    compiled.compiled_nhwc_rows_into(np, x, got, g, groups)
    assert_same_bits((got,), (expected,))


@pytest.mark.parametrize("arrays", ["float16", "strided grads", "mixed dtypes", "empty"])
def test_arrays_it_does_not_take_go_to_the_numpy_kernels(arrays, monkeypatch):
    g, groups, x, grads, image = _arrays(GEOMETRIES[0], "float32")
    if arrays == "float16":
        x, grads, image = x.astype(np.float16), grads.astype(np.float16), image.astype(np.float16)
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
    falls_back = {"strided grads": ["col2im"], "mixed dtypes": ["col2im"]}
    assert calls == falls_back.get(arrays, ["rows", "col2im"])


def _conv_results(lib, x, w, b, attrs, layout="channels_last", grad="ones"):
    X = lib.tensor(x)
    if layout == "channels_last":
        X = X.contiguous(memory_format=lib.channels_last)
    X.requires_grad_()
    W, B = (lib.tensor(a).requires_grad_() for a in (w, b))
    y = lib.nn.functional.conv2d(X, W, B, **attrs)
    if grad == "sum":  # the gradient arrives as one value broadcast
        y.sum().backward()
    elif grad == "NCHW":
        y.backward(lib.tensor(np.linspace(-1, 1, y.numel(), dtype=x.dtype).reshape(tuple(y.shape))))
    else:
        y.backward(lib.ones_like(y) * 0.5)
    return [t.detach().numpy() for t in (y, X.grad, W.grad, B.grad)]


# (layout, gradient): channels_last with a channels_last gradient, with an NCHW one and
# with a sum's broadcast one; an NCHW small map (16 channels, 8x8: it gathers in NHWC)
RUNS = [("channels_last", "ones"), ("channels_last", "NCHW"), ("channels_last", "sum"), ("NCHW", "ones")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("attrs", [dict(padding=1), dict(stride=2, padding=1), dict(padding=2, dilation=2),
                                   dict(stride=2, padding=1, groups=2)])
def test_a_convolution_is_torchs_with_the_compiled_kernels_and_with_numpys(attrs, run, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    C = 16 if run[0] == "NCHW" else 6
    x = rng.standard_normal((3, C, 8, 8) if run[0] == "NCHW" else (3, C, 9, 11)).astype(dtype)  # odd sizes
    w = rng.standard_normal((8, C // attrs.get("groups", 1), 3, 3)).astype(dtype)
    b = rng.standard_normal(8).astype(dtype)
    expected = _conv_results(torch, x, w, b, attrs, *run)
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    gathers = []
    loop = compiled.loops.nhwc_rows_loop
    monkeypatch.setattr(compiled.loops, "nhwc_rows_loop", lambda *a: gathers.append(1) or loop(*a))
    monkeypatch.setattr(compiled, "nhwc_rows_into", no_fallback)
    monkeypatch.setattr(compiled, "nhwc_col2im_add", no_fallback)
    compiled_results = _conv_results(ember, x, w, b, attrs, *run)
    nchw_groups = run[0] == "NCHW" and "groups" in attrs  # NCHW with groups keeps NCHW im2col
    assert bool(gathers) != nchw_groups  # the compiled gather ran, and nothing fell back to NumPy
    for op in (NHWC_ROWS_INTO, NHWC_COL2IM_ADD):
        monkeypatch.setitem(op.kernels, "cpu", op.generic)
        monkeypatch.setattr(op, "_resolved", {})  # the op resolves its kernel again
    numpy_results = _conv_results(ember, x, w, b, attrs, *run)
    for got, numpy_got, want in zip(compiled_results, numpy_results, expected):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
        np.testing.assert_array_equal(got, numpy_got)  # the kernels agree bit for bit
