"""The forward's im2col columns, kept for the weight's gradient
(ember/native/convolution/columns.py): the backward uses them instead of building them
again, its results are the rebuilt ones bit for bit and torch's, and the memo lets go
of them with the graph, within its budget."""

import gc
import weakref

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradgradcheck
from ember.native.convolution import channels_last as nhwc
from ember.native.convolution import channels_last_images as nhwc_images
from ember.native.convolution import columns as kept
from ember.native.convolution import convolution, images
from ember.native.fold import IM2COL_INTO

# (N, C, O, H, W, stride, padding, dilation, groups): stride 1 (O > C: col2im) and 2
# (phases), dilation, groups, a 1x1, batch 1, odd sizes; small NCHW maps of 16 channels,
# whose forward gathers in NHWC (NOTE [ Small NCHW maps gather in NHWC ]) and keeps
# nothing, one of them with as many windows as taps (N*L = K = 144: the layouts have
# the same shape, so only their names tell NCHW's columns from NHWC's rows)
SHAPES = [
    (2, 3, 5, 7, 9, 1, 1, 1, 1),
    (2, 4, 6, 9, 8, 2, 1, 1, 1),
    (1, 3, 4, 10, 11, 1, 2, 2, 1),
    (2, 4, 6, 7, 7, 1, 1, 1, 2),
    (3, 5, 2, 6, 5, 1, 0, 1, 1),
    (2, 16, 8, 6, 7, 1, 1, 1, 1),
    (4, 16, 8, 6, 6, 1, 1, 1, 1),
]


def _conv_grads(lib, arrays, attrs, channels_last, bias=True):
    x, w, g = arrays
    fmt = lib.channels_last if channels_last else lib.contiguous_format
    X = lib.tensor(x).to(memory_format=fmt).requires_grad_()
    W = lib.tensor(w).to(memory_format=fmt).requires_grad_()
    B = lib.zeros(w.shape[0], dtype=W.dtype).requires_grad_() if bias else None
    lib.nn.functional.conv2d(X, W, B, **attrs).backward(lib.tensor(g))
    return [t.grad.detach().numpy() for t in (X, W) + ((B,) if bias else ())]


def _case(shape, kernel, dtype):
    N, C, O, H, W, stride, padding, dilation, groups = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C // groups) + kernel).astype(dtype)
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **attrs)
    return (x, w, rng.standard_normal(y.shape).astype(dtype)), attrs


def _counting(monkeypatch):
    """Count the im2col builds of both layouts, by role: of the whole batch
    (``_columns``, ``window_rows``) or a few images at a time (core's im2col and NHWC
    gather stubs, maybe compiled; these images are small enough for one chunk)."""
    calls = []
    columns, rows, kernel_of = convolution._columns, nhwc.window_rows, images.kernel_of

    def counted_kernel(op, xp):
        kernel = kernel_of(op, xp)
        counted = op in (IM2COL_INTO, nhwc.NHWC_ROWS_INTO)
        return (lambda xp, x, *a: calls.append(x.shape) or kernel(xp, x, *a)) if counted else kernel

    monkeypatch.setattr(images, "kernel_of", counted_kernel)
    monkeypatch.setattr(nhwc_images, "kernel_of", counted_kernel)

    def counted_columns(xp, x, g, groups):
        calls.append(x.shape)
        return columns(xp, x, g, groups)

    def counted_rows(xp, x, g, groups):
        calls.append(x.shape)
        return rows(xp, x, g, groups)

    monkeypatch.setattr(convolution, "_columns", counted_columns)
    monkeypatch.setattr(nhwc, "window_rows", counted_rows)
    return calls


@pytest.mark.parametrize("threads", [1, 2])  # NCHW: a few images at a time, or the whole batch
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_backward_uses_the_forwards_columns_and_matches_torch(monkeypatch, shape, dtype, channels_last,
                                                                   threads):
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)  # these small maps count as large
    kernel = (1, 1) if shape[2] == 2 else (3, 3)
    arrays, attrs = _case(shape, kernel, dtype)
    calls = _counting(monkeypatch)  # too small to measure Winograd: im2col, which keeps columns
    with threadpool_limits(limits=threads, user_api="blas"):
        got = _conv_grads(ember, arrays, attrs, channels_last)
        builds = len(calls)
        monkeypatch.setattr(kept, "BUDGET", 0)  # nothing kept: the backward rebuilds
        monkeypatch.setattr(kept, "ALONE", 0)
        rebuilt = _conv_grads(ember, arrays, attrs, channels_last)
    expected = _conv_grads(torch, arrays, attrs, channels_last)
    x_shape = arrays[0].shape
    one_by_one = kernel == (1, 1) and attrs["stride"] == 1 and attrs["padding"] == 0
    gathers_in_nhwc = not channels_last and shape[1] >= 16
    if not one_by_one:  # NCHW's 1x1 runs without columns; channels_last's are a view
        assert calls[:builds].count(x_shape) == (2 if gathers_in_nhwc else 1)  # none in the backward
        assert calls[builds:].count(x_shape) == 2  # forward and backward
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    for a, b in zip(got, rebuilt):  # the same sums; BLAS may block them differently
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)
    assert kept.kept_bytes() == 0  # the backward let them go


def _forward(requires_grad=True, channels_last=False, **attrs):
    x = ember.randn(2, 3, 8, 8)
    w = ember.randn(4, 3, 3, 3)
    if channels_last:
        x, w = x.to(memory_format=ember.channels_last), w.to(memory_format=ember.channels_last)
    w.requires_grad_(requires_grad)
    return ember.nn.functional.conv2d(x, w, padding=1, **attrs), w


@pytest.mark.parametrize("channels_last", [False, True])
def test_columns_are_kept_only_when_the_weights_gradient_will_want_them(channels_last):
    gc.collect()
    before = kept.kept_bytes()
    y, _ = _forward(channels_last=channels_last)
    assert kept.kept_bytes() - before == 3 * 9 * 2 * 64 * 4
    del y
    gc.collect()
    assert kept.kept_bytes() == before  # the graph went, and its columns with it
    with ember.no_grad():
        y, _ = _forward(channels_last=channels_last)
    assert kept.kept_bytes() == before
    y, _ = _forward(requires_grad=False, channels_last=channels_last)
    assert kept.kept_bytes() == before
    w = ember.randn(3, 4, 3, 3).requires_grad_()
    ember.nn.functional.conv_transpose2d(ember.randn(2, 3, 5, 5), w)
    assert kept.kept_bytes() == before  # a transposed convolution's weight reads the gradient's windows


def test_the_budget_bounds_what_is_kept(monkeypatch):
    gc.collect()
    monkeypatch.setattr(kept, "BUDGET", kept.kept_bytes() + 3 * 9 * 2 * 64 * 4)
    first, _ = _forward()
    second, _ = _forward()
    assert kept.kept_bytes() == kept.BUDGET  # the second layer rebuilds its columns
    del first, second


def test_a_second_backward_and_double_backward_rebuild_them():
    results = []
    for _ in range(2):
        y, w = _forward()
        y.square().sum().backward(retain_graph=True)
        first = w.grad.clone()
        w.grad = None
        y.square().sum().backward()
        results.append((first, w.grad))
    assert ember.equal(results[0][0], results[0][1])
    x = ember.randn(2, 3, 6, 6, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    assert gradgradcheck(lambda a, b: ember.nn.functional.conv2d(a, b, padding=1), (x, w))


def test_changing_the_input_in_place_after_the_forward_fails_as_in_torch():
    for lib in (ember, torch):
        x = lib.randn(2, 3, 8, 8)
        w = lib.randn(4, 3, 3, 3, requires_grad=True)
        y = lib.nn.functional.conv2d(x, w, padding=1)
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("channels_last", [False, True])
def test_one_convolution_may_keep_more_than_the_budget_alone(monkeypatch, channels_last):
    # NCHW on two BLAS threads: the whole batch's columns; a few images at a time
    # (one thread) keep theirs only within the budget (kept.wanted)
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(kept, "_KEPT", weakref.WeakKeyDictionary())  # nothing kept yet
    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)  # 8x8 maps count as large
    size = 3 * 9 * 2 * 64 * 4
    monkeypatch.setattr(kept, "BUDGET", 0)
    monkeypatch.setattr(kept, "ALONE", size)
    with threadpool_limits(limits=2, user_api="blas"):
        first, _ = _forward(channels_last=channels_last)
        assert kept.kept_bytes() == size  # alone, past the budget
        second, _ = _forward(channels_last=channels_last)
        assert kept.kept_bytes() == size  # not beside another
        del first, second
        gc.collect()
        monkeypatch.setattr(kept, "ALONE", size - 1)
        third, _ = _forward(channels_last=channels_last)
        assert kept.kept_bytes() == 0  # larger than ALONE
    with threadpool_limits(limits=1, user_api="blas"):
        monkeypatch.setattr(kept, "ALONE", size)
        if not channels_last:
            fourth, _ = _forward()
            assert kept.kept_bytes() == 0  # a few images at a time: only within the budget
