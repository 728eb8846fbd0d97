"""F.interpolate and the Upsample layers against torch: nearest, nearest-exact, linear,
bilinear, bicubic (also antialiased), trilinear (align_corners True/False) and area (3-D
to 5-D), by size and by scale_factor
(with and without recompute_scale_factor), up and down, float32/float64: outputs and
input gradients; gradcheck and double backward; errors."""

import pytest
import torch
from spatial_parity import TOLERANCE, check_layer, same_error

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_parity, make_tensor

FLOATS = ["float32", "float64"]
SIZES = [dict(size=(7, 11)), dict(size=(3, 2)), dict(size=5), dict(scale_factor=2), dict(scale_factor=(1.7, 0.6)),
         dict(scale_factor=2.5, recompute_scale_factor=True), dict(scale_factor=0.5)]
MODES = [("nearest", None), ("nearest-exact", None), ("bilinear", True), ("bilinear", False), ("area", None),
         ("bicubic", True), ("bicubic", False)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode, align_corners", MODES)
@pytest.mark.parametrize("sizes", SIZES)
def test_interpolate_2d(dtype, mode, align_corners, sizes):
    x = make_tensor((2, 3, 5, 6), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, **sizes),
                  x, **TOLERANCE[dtype])


@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("nearest-exact", None), ("linear", True),
                                                 ("linear", False), ("area", None)])
@pytest.mark.parametrize("sizes", [dict(size=9), dict(size=4), dict(scale_factor=1.5), dict(scale_factor=3)])
def test_interpolate_1d(mode, align_corners, sizes):
    x = make_tensor((2, 3, 7))
    assert_parity(lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, **sizes),
                  x, noncontiguous=True, **TOLERANCE["float32"])


@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("nearest-exact", None), ("trilinear", True),
                                                 ("trilinear", False), ("area", None)])
@pytest.mark.parametrize("sizes", [dict(size=(3, 7, 8)), dict(scale_factor=1.7), dict(scale_factor=(0.5, 2, 1.3))])
def test_interpolate_3d(mode, align_corners, sizes):
    x = make_tensor((2, 3, 4, 5, 6), "float64")
    assert_parity(lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, **sizes),
                  x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode, align_corners", MODES[:4])
@pytest.mark.parametrize("sizes", [dict(scale_factor=2), dict(size=(7, 11)), dict(scale_factor=(1.7, 0.6))])
def test_channels_last_maps_resample_as_nhwc_like_torch_and_like_nchw(dtype, mode, align_corners, sizes):
    # NOTE [ Resampling channels_last maps as NHWC ]: torch's values, gradients and
    # strides (the gradient stays channels_last), and the NCHW path's values bit for bit
    def interpolate(lib, x):
        out = lib.nn.functional.interpolate(x.contiguous(memory_format=lib.channels_last), mode=mode,
                                            align_corners=align_corners, **sizes)
        assert out.is_contiguous(memory_format=lib.channels_last)
        return out
    x = make_tensor((2, 5, 6, 4), dtype)
    ours, theirs = assert_parity(interpolate, x, **TOLERANCE[dtype])
    assert ours.stride() == theirs.stride()
    nchw = ember.nn.functional.interpolate(ember.tensor(x), mode=mode, align_corners=align_corners, **sizes)
    assert (ours.detach().numpy() == nchw.numpy()).all()
    x_e = ember.tensor(x).contiguous(memory_format=ember.channels_last).requires_grad_()
    ember.nn.functional.interpolate(x_e, mode=mode, align_corners=align_corners, **sizes).sum().backward()
    assert x_e.grad.is_contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("sizes", [dict(size=(3, 4)), dict(size=(9, 13)), dict(scale_factor=0.3), dict(size=(2, 17))])
def test_antialias(dtype, mode, align_corners, sizes):
    # shrinking stretches the filter over every input pixel it covers; growing is the plain filter
    x = make_tensor((2, 3, 8, 11), dtype)
    assert_parity(lambda lib, x: lib.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                                               antialias=True, **sizes), x, **TOLERANCE[dtype])


def test_large_scale_nearest_ties():
    """Positions computed in float32 as PyTorch does: no off-by-one on exact ratios."""
    x = make_tensor((1, 1, 3, 10))
    for size in ((9, 30), (7, 23), (1, 1), (3, 10)):
        for mode in ("nearest", "nearest-exact"):
            assert_parity(lambda lib, x: lib.nn.functional.interpolate(x, size=size, mode=mode), x)


def test_gradcheck_and_double_backward():
    x = ember.tensor(make_tensor((1, 2, 3, 4), "float64")).requires_grad_()
    F = ember.nn.functional
    for fn in (lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
               lambda x: F.interpolate(x, size=(5, 3), mode="bilinear", align_corners=True),
               lambda x: F.interpolate(x, size=(7, 5), mode="nearest"),
               lambda x: F.interpolate(x, size=(5, 2), mode="bicubic"),
               lambda x: F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=True)):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


LAYERS = [
    ("Upsample", dict(scale_factor=2)),
    ("Upsample", dict(size=(4, 9), mode="bilinear")),
    ("Upsample", dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)),
    ("UpsamplingNearest2d", dict(size=7)),
    ("UpsamplingBilinear2d", dict(scale_factor=2)),
    ("Upsample", dict(scale_factor=(2, 0.7), mode="bicubic")),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name, kwargs", LAYERS)
def test_layers(dtype, name, kwargs):
    ours, theirs = getattr(ember.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs)
    check_layer(ours, theirs, make_tensor((2, 3, 4, 5), dtype), dtype)


ERRORS = [
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=3, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4)),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=3, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4), size=3, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=(3, 3, 3)),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), scale_factor=(2, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="trilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4), size=3, mode="bicubic"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, 4), size=3, mode="bicubic"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="cubic"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, dtype=lib.int64), size=3, mode="bicubic"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="nearest", antialias=True),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, 4), size=3, mode="trilinear", antialias=True),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, dtype=lib.int64), scale_factor=2),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    # torch names an internal channels-last kernel for integer inputs: compare the type there.
    same_error(ERRORS[index], message=index != len(ERRORS) - 1)
