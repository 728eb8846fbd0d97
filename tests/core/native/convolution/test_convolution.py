"""The NCHW im2col backward of ember/native/convolution/convolution.py: its input and weight
gradients read one channel-major copy of the output gradient (none when they run a few
images at a time), and the results equal torch's."""

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.native.convolution import algorithm, convolution, images, phases
from ember.native.fold import COL2IM_ADD


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stride, padding", [(1, 1), (2, 0), (2, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_transposes_the_output_gradient_once(monkeypatch, stride, padding, dtype, threads):
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)  # these small maps count as large
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
        with threadpool_limits(limits=threads, user_api="blas"):
            lib.nn.functional.conv2d(X, W, B, stride=stride, padding=padding).backward(lib.tensor(g))
        grads[lib.__name__] = [t.grad.detach().numpy() for t in (X, W, B)]
    # O > C: the stride-1 input adjoint is col2im here too; on one BLAS thread the
    # products run a few images at a time and read the gradient where it lies
    assert calls == ([] if threads == 1 else [g.shape])
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
    pointwise = algorithm._pointwise_forward(np, (x, None), w, g, 1)
    np.testing.assert_allclose(pointwise, im2col, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs, taken", [({}, True), ({"stride": 2}, False), ({"padding": 1}, False),
                                           ({"groups": 2}, False)])
def test_only_an_unpadded_stride_one_ungrouped_1x1_takes_the_pointwise_path(monkeypatch, kwargs, taken):
    calls = []
    pointwise = algorithm._pointwise_forward
    monkeypatch.setattr(algorithm, "_pointwise_forward", lambda *a: calls.append(1) or pointwise(*a))
    x, w = ember.randn(2, 4, 5, 5), ember.randn(6, 4 // kwargs.get("groups", 1), 1, 1)
    ember.nn.functional.conv2d(x, w, **kwargs)
    assert bool(calls) == taken


# Small NCHW maps with 16 channels or more gather in NHWC: NOTE [ Small NCHW maps
# gather in NHWC ]. (N, C, O, H, W, kwargs): stride 2, padding 0 and 2, dilation, a 5x5
# and a strided 1x1 kernel, batch 1 and an empty batch, odd and unequal sizes.
NHWC_GATHER_CASES = [
    ((2, 16, 5, 7, 9), {"padding": 1}),
    ((3, 17, 4, 6, 5), {"stride": 2, "padding": 1}),
    ((2, 16, 3, 9, 8), {"padding": 0}),
    ((1, 20, 6, 8, 8), {"padding": 2, "dilation": 2}),
    ((2, 16, 4, 7, 7), {"padding": 2}),  # 5x5 below
    ((2, 18, 5, 6, 7), {"stride": 2}),  # 1x1 below
    ((0, 16, 4, 4, 4), {"padding": 1}),
]


def _gather_weight(shape, kwargs):
    N, C, O, H, W = shape
    kernel = 5 if shape == (2, 16, 4, 7, 7) else 1 if shape == (2, 18, 5, 6, 7) else 3
    return (N, C, H, W), (O, C, kernel, kernel)


@pytest.mark.parametrize("case", NHWC_GATHER_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_small_map_nhwc_gather_as_torch(monkeypatch, case, dtype, noncontiguous):
    from ember.testing import assert_parity

    shape, kwargs = case
    x_shape, w_shape = _gather_weight(shape, kwargs)
    taken = []
    gathers = algorithm._gathers_in_nhwc
    monkeypatch.setattr(algorithm, "_gathers_in_nhwc", lambda *a: taken.append(gathers(*a)) or taken[-1])
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype)
    tolerance = 1e-4 if dtype == "float32" else 1e-12
    out, expected = assert_parity(lambda lib, *t: lib.nn.functional.conv2d(*t, **kwargs), x, w, b,
                                  noncontiguous=noncontiguous, rtol=tolerance, atol=tolerance)
    # The NHWC gather ran (an empty batch runs no kernel: NOTE [ A convolution with
    # nothing to convolve ]); NCHW strides out.
    assert (taken[0] if x_shape[0] else not taken) and out.stride() == expected.stride()


@pytest.mark.parametrize("case", NHWC_GATHER_CASES)
def test_small_map_nhwc_gather_equals_the_nchw_im2col_it_replaces(case):
    shape, kwargs = case
    x_shape, w_shape = _gather_weight(shape, kwargs)
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    stride, padding, dilation = (kwargs.get(k, d) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1)))
    g = convolution._geometry(x.shape, w.shape, (stride,) * 2, (padding,) * 2, (dilation,) * 2)
    im2col = convolution._image(np, convolution._forward(np, x, w, g, 1), x.shape[0], g)
    gathered = algorithm._gathered_forward(np, (x, None), w, g, 1)
    assert gathered.flags.c_contiguous
    np.testing.assert_allclose(gathered, im2col, rtol=1e-12, atol=1e-12)


def test_conv1d_with_many_channels_gathers_in_nhwc_as_torch():
    from ember.testing import assert_parity

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 16, 11)), rng.standard_normal((4, 16, 3))
    assert_parity(lambda lib, *t: lib.nn.functional.conv1d(*t, padding=1, stride=2), x, w,
                  rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_shape, kwargs, taken", [
    ((2, 16, 8, 8), {}, True),
    ((2, 16, 16, 16), {"dtype": "float64"}, True),  # float32 runs the direct kernel (direct.py)
    ((2, 15, 8, 8), {}, False),  # few channels: NCHW's runs are as long as NHWC's
    ((2, 16, 16, 17), {}, False),  # a larger map: NCHW im2col copies long runs
    ((2, 16, 8, 8), {"groups": 2}, False),
])
def test_which_nchw_convolutions_gather_in_nhwc(monkeypatch, x_shape, kwargs, taken):
    calls = []
    forward = algorithm.nhwc.forward
    monkeypatch.setattr(algorithm.nhwc, "forward", lambda *a: calls.append(1) or forward(*a))
    kwargs = dict(kwargs)
    dtype = getattr(ember, kwargs.pop("dtype", "float32"))
    x = ember.randn(*x_shape, dtype=dtype)
    w = ember.randn(8, x_shape[1] // kwargs.get("groups", 1), 3, 3, dtype=dtype)
    ember.nn.functional.conv2d(x, w, padding=1, **kwargs)
    assert bool(calls) == taken
    calls.clear()
    with ember.backends.mkldnn.flags(enabled=False):  # NCHW im2col, torch's rounding order
        ember.nn.functional.conv2d(x, w, padding=1, **kwargs)
    assert not calls


# (N, C, O, H, W, stride, padding, groups): input adjoints that add windows back by
# col2im (NCHW at stride 1 with O > C or with groups, channels_last at stride 2), and
# ones that do not (NCHW by phases, channels_last's stride-1 "full" correlation)
CHUNKED = [(3, 2, 5, 7, 6, 1, 1, 1), (3, 4, 6, 6, 7, 1, 1, 2), (3, 3, 4, 9, 8, 2, 1, 1), (2, 4, 4, 7, 7, 2, 0, 2)]


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", CHUNKED)
def test_col2im_a_few_images_at_a_time_matches_torch(monkeypatch, shape, dtype, channels_last):
    from ember.native.convolution import channels_last as nhwc
    from ember.native.convolution import channels_last_images as nhwc_images

    N, C, O, H, W, stride, padding, groups = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C // groups, 3, 3)).astype(dtype)
    attrs = dict(stride=stride, padding=padding, groups=groups)
    g = rng.standard_normal(torch.conv2d(torch.tensor(x), torch.tensor(w), **attrs).shape).astype(dtype)
    from threadpoolctl import threadpool_limits

    monkeypatch.setattr(images, "CHUNK_ELEMENTS", 1)  # one image per product
    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)  # these small maps count as large
    adds = []  # one col2im per chunk of images
    col2im, kernel_of = convolution.col2im_taps, images.kernel_of
    monkeypatch.setattr(convolution, "col2im_taps", lambda *a, **k: adds.append(1) or col2im(*a, **k))

    def counted_kernel(op, xp):  # the ungrouped NCHW col2im and the NHWC one: core's stubs, maybe compiled
        kernel = kernel_of(op, xp)
        return (lambda *a: adds.append(1) or kernel(*a)) if op in (COL2IM_ADD, nhwc.NHWC_COL2IM_ADD) else kernel

    monkeypatch.setattr(images, "kernel_of", counted_kernel)
    monkeypatch.setattr(nhwc, "kernel_of", counted_kernel)
    monkeypatch.setattr(nhwc_images, "kernel_of", counted_kernel)
    grads = {}
    for lib in (ember, torch):
        fmt = lib.channels_last if channels_last else lib.contiguous_format
        X = lib.tensor(x).to(memory_format=fmt).requires_grad_()
        W_ = lib.tensor(w).to(memory_format=fmt)
        with threadpool_limits(limits=1, user_api="blas"):  # chunks only on one thread
            lib.nn.functional.conv2d(X, W_, **attrs).backward(lib.tensor(g))
        grads[lib.__name__] = X.grad
    # channels_last at stride 1: the full correlation, but one group's chunks take col2im where O > C
    by_col2im = stride > 1 or (groups == 1 and O > C) if channels_last else stride == 1 or groups > 1
    assert len(adds) == (N if by_col2im else 0)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(grads["ember"].numpy(), grads["torch"].numpy(), rtol=tolerance, atol=tolerance)
    assert grads["ember"].stride() == grads["torch"].stride()


def test_loops_of_products_run_only_on_one_blas_thread():
    from threadpoolctl import threadpool_limits

    from ember.native.convolution import images

    with threadpool_limits(limits=1, user_api="blas"):
        assert images.one_blas_thread()
    with threadpool_limits(limits=2, user_api="blas"):
        assert not images.one_blas_thread()


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "broadcast", "sliced"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_the_bias_gradient_sums_every_layout_as_torch(layout, dtype):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((3, 5, 6, 7)).astype(dtype)
    if layout == "channels_last":
        g = np.ascontiguousarray(g.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif layout == "broadcast":  # what .sum().backward() hands a convolution
        g = np.broadcast_to(g[:1, :, :1], g.shape)
    elif layout == "sliced":
        g = g[:, :, :, ::2]
    expected = torch.tensor(np.ascontiguousarray(g)).sum(dim=(0, 2, 3)).numpy()
    tolerance = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(convolution._bias_gradient(np, g), expected, rtol=tolerance, atol=tolerance)


# (N, C, O, H, W, stride, padding, dilation): O > C (col2im) and O <= C (the stride-1
# "full" correlation), stride 2 (the input adjoint by phases), dilation, batch 1
PER_IMAGE = [(3, 2, 5, 7, 6, 1, 1, 1), (2, 6, 4, 6, 7, 1, 1, 1), (2, 3, 4, 9, 8, 2, 1, 1),
             (1, 3, 5, 9, 9, 1, 2, 2), (2, 4, 3, 5, 8, 1, 0, 1)]


@pytest.mark.parametrize("broadcast", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", PER_IMAGE)
def test_nchw_products_one_image_at_a_time_match_torch(monkeypatch, shape, dtype, broadcast):
    from threadpoolctl import threadpool_limits

    N, C, O, H, W, stride, padding, dilation = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    w = rng.standard_normal((O, C, 3, 3)).astype(dtype)
    attrs = dict(stride=stride, padding=padding, dilation=dilation)
    g = rng.standard_normal(torch.conv2d(torch.tensor(x), torch.tensor(w), **attrs).shape).astype(dtype)
    monkeypatch.setattr(images, "MIN_PIXELS", 1)  # every map counts as large
    monkeypatch.setattr(images, "MIN_CHUNK_PIXELS", 1)
    monkeypatch.setattr(images, "CHUNK_ELEMENTS", 1)
    calls = []
    for name in ("forward", "weight_adjoint"):
        kernel = getattr(images, name)
        monkeypatch.setattr(images, name, lambda *a, _name=name, _kernel=kernel: calls.append(_name) or _kernel(*a))
    results = {}
    for lib in (ember, torch):
        X, W_ = lib.tensor(x).requires_grad_(), lib.tensor(w).requires_grad_()
        B = lib.zeros(O, dtype=W_.dtype).requires_grad_()
        with threadpool_limits(limits=1, user_api="blas"):  # one image at a time only on one thread
            y = lib.nn.functional.conv2d(X, W_, B, **attrs)
            y.sum().backward() if broadcast else y.backward(lib.tensor(g))  # sum(): a broadcast gradient
        results[lib.__name__] = [y.detach(), X.grad, W_.grad, B.grad]
    assert calls.count("weight_adjoint") == 1
    assert calls.count("forward") == (2 if stride == 1 and O <= C else 1)  # and the "full" correlation
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    for got, expected in zip(results["ember"], results["torch"]):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=tolerance, atol=tolerance)
        assert got.stride() == expected.stride()


def test_the_nhwc_gather_is_numpy_only():
    # measured on NumPy; a CuPy array keeps NCHW im2col
    import types

    g = convolution._geometry((2, 16, 8, 8), (8, 16, 3, 3), (1, 1), (1, 1), (1, 1))
    assert algorithm._gathers_in_nhwc(np, g, 1)
    assert not algorithm._gathers_in_nhwc(types.SimpleNamespace(__name__="cupy"), g, 1)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.conv2d(lib.randn(1, 3, 5, 5), lib.randn(0, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.randn(1, 0, 5, 5), lib.randn(0, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv1d(lib.randn(1, 3, 5), lib.randn(0, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.randn(1, 4, 5, 5), lib.randn(0, 2, 3, 3), groups=2),
])
def test_a_weight_with_fewer_filters_than_groups_fails_as_in_torch(call):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as error:
            call(lib)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("case", ["channels", "bias", "transposed channels", "transposed bias"])
def test_channel_and_bias_messages_are_torchs(case):
    # formatted only when the check fails (the call's fixed cost), and still torch's words
    def call(lib):
        transposed = case.startswith("transposed")
        channels = (4 if transposed else 2) if case.endswith("bias") else 3  # the weight wants 4 / 2
        x, w = lib.randn(1, channels, 5, 5), lib.randn(4, 2, 3, 3)
        bias = lib.randn(3) if case.endswith("bias") else None
        F = lib.nn.functional
        return F.conv_transpose2d(x, w, bias) if transposed else F.conv2d(x, w, bias)

    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as error:
            call(lib)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_a_few_images_at_a_time_is_numpy_only():
    # measured on NumPy with one BLAS thread; a CuPy array keeps the whole batch's products
    import types

    from threadpoolctl import threadpool_limits

    g = convolution._geometry((2, 16, 32, 32), (8, 16, 3, 3), (1, 1), (1, 1), (1, 1))
    with threadpool_limits(limits=1, user_api="blas"):
        assert images.applies(np, g, 1)
        small = convolution._geometry((2, 16, 8, 8), (8, 16, 3, 3), (1, 1), (1, 1), (1, 1))
        assert not images.applies(np, small, 1)  # 64 outputs per image: the whole batch
        assert not images.applies(types.SimpleNamespace(__name__="cupy"), g, 1)
        assert not images.applies(np, g, 2)  # groups keep one product per group
    with threadpool_limits(limits=2, user_api="blas"):
        assert not images.applies(np, g, 1)


# NOTE [ A convolution's fixed cost, cached per shape ]: the checks, layouts, geometries
# and col2im slices are cached per shapes, strides and sizes; calls that share a shape
# and differ in anything else must each get their own.
def _one_shape_many_calls():
    """Calls on a (2, 4, 9, 9) input and a 4-filter 3x3 weight, alike in shape."""
    for layout in ("contiguous", "channels_last", "sliced"):
        for stride, padding, dilation, groups in [(1, 1, 1, 1), (2, 1, 1, 1), (1, 0, 1, 1), (1, (2, 1), 2, 1),
                                                  (2, 0, 1, 2), (1, 1, 1, 4)]:
            yield layout, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


def _in_layout(lib, array, layout):
    if layout == "channels_last":
        return lib.tensor(array).contiguous(memory_format=lib.channels_last)
    if layout == "sliced":  # the same shape, other strides
        return lib.tensor(np.concatenate([array, array], axis=-1))[..., ::2]
    return lib.tensor(array)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_calls_of_one_shape_with_other_strides_and_sizes_each_match_torch(dtype, transposed):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 9, 9)).astype(dtype)
    tolerance = 1e-4 if dtype == "float32" else 1e-10
    for _ in range(2):  # the second pass reads every cache the first one filled
        for layout, kwargs in _one_shape_many_calls():
            w = rng.standard_normal((4, 4 // kwargs["groups"], 3, 3)).astype(dtype)
            results = []
            for lib in (ember, torch):
                X, W = _in_layout(lib, x, layout).requires_grad_(), lib.tensor(w).requires_grad_()
                F = lib.nn.functional
                if transposed:
                    out_padding = 1 if kwargs["stride"] == 2 else 0
                    y = F.conv_transpose2d(X, W, output_padding=out_padding, **kwargs)
                else:
                    y = F.conv2d(X, W, **kwargs)
                (y * y).sum().backward()
                results.append([y.detach().numpy(), X.grad.numpy(), W.grad.numpy(), y.stride()])
            (y, gx, gw, strides), (y_t, gx_t, gw_t, strides_t) = results
            assert strides == strides_t, (layout, kwargs)
            for got, expected in ((y, y_t), (gx, gx_t), (gw, gw_t)):
                np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance, err_msg=str((layout, kwargs)))


def test_a_failing_call_raises_torchs_message_every_time_and_a_passing_one_still_passes():
    # a failing set of arguments is never cached: the second call checks again
    def call(lib, groups):
        return lib.nn.functional.conv2d(lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3), groups=groups)

    for _ in range(2):
        messages = []
        for lib in (ember, torch):
            with pytest.raises(RuntimeError) as error:
                call(lib, 1)
            messages.append(str(error.value))
        assert messages[0] == messages[1]
        np.testing.assert_array_equal(call(ember, 2).numpy(), call(torch, 2).numpy())


def test_the_dtype_check_follows_autocast_between_calls_of_one_shape():
    # autocast is part of the checks' key: the call under it passing leaves no pass behind
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3, dtype=torch.float64))
    x, w = ember.ones(1, 2, 5, 5), ember.ones(3, 2, 3, 3, dtype=ember.float64)
    for autocasting in (False, True, False):
        if autocasting:
            with ember.autocast("cpu", dtype=ember.bfloat16):  # the dispatcher casts both: no error
                ember.nn.functional.conv2d(x, w)
        else:
            with pytest.raises(RuntimeError) as error:
                ember.nn.functional.conv2d(x, w)
            assert str(error.value) == str(expected.value)
