"""deform_conv2d's compiled cpu kernels: the sampling loop and the backward's loops, built
ahead of time as ember-vision's setup.py builds them (and through numba's JIT), give the
NumPy reference's columns, outputs and gradients bit for bit, run after run; the loader
registers them only when the build is there and was made from today's loops.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d_loops.py,
deform_conv2d_build.py and deform_conv2d_compiled.py (PyTorch counterpart:
torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp, torchvision 0.28).
"""


import numpy as np
import pytest
from aot_build import built_extension, installed_in

import ember
from ember.dispatcher import forget_kernels
from ember_vision.ops import deform_conv2d, deform_conv2d_build, deform_conv2d_compiled, deform_conv2d_loops
from ember_vision.ops.deform_conv2d_kernel import check_arguments, deform_conv2d_backward, deformable_im2col
from ember_vision.ops.deform_conv2d_kernel import deform_conv2d as deform_conv2d_op

ATTRS = dict(stride_h=2, stride_w=1, pad_h=1, pad_w=2, dilation_h=1, dilation_w=2, groups=2, offset_groups=3)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The extension module as setup.py builds it, in a folder of its own, and loaded."""
    return built_extension(tmp_path_factory.mktemp("build"), "_deform_conv2d_compiled", deform_conv2d_loops)


def _arrays(dtype, use_mask, seed=0):
    """Input, offsets reaching well outside, and a mask with negative values too."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 6, 9, 7)).astype(dtype)
    mask = rng.standard_normal((2, 18, 5, 9)).astype(dtype)
    geometry = check_arguments(x, np.zeros((4, 3, 3, 2)), np.zeros((2, 36, 5, 9)), mask, use_mask=use_mask, **ATTRS)
    offset = (rng.standard_normal((2, 36, 5, 9)) * 4).astype(dtype)
    return x, offset, mask, geometry


def _bits(array):
    return array.view(np.uint8).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
@pytest.mark.parametrize("how", ["ahead_of_time", "jit"])
def test_columns_are_the_references_bit_for_bit(built, how, use_mask, dtype):
    x, offset, mask, geometry = _arrays(dtype, use_mask)
    if how == "jit":
        im2col = deform_conv2d_compiled.columns_with(lambda name: deform_conv2d_loops.jitted)
    else:
        im2col = deform_conv2d_compiled.columns_with(lambda name: getattr(built[1], f"deformable_im2col_{name}"))
    expected = deformable_im2col(np, x, offset, mask, geometry)
    first, second = im2col(np, x, offset, mask, geometry), im2col(np, x, offset, mask, geometry)
    assert first.dtype == dtype and _bits(first) == _bits(expected) and _bits(second) == _bits(first)


def _backward_kernel(built, how):
    """The compiled backward kernel over the build's exports or numba's JIT of the loops."""
    if how == "jit":
        loops = [deform_conv2d_loops.jitted, deform_conv2d_loops.jitted_col2im, deform_conv2d_loops.jitted_col2im_coord]
        return deform_conv2d_compiled.backward_with(*(lambda dtype, loop=loop: loop for loop in loops))
    names = ("deformable_im2col", "deformable_col2im", "deformable_col2im_coord")
    return deform_conv2d_compiled.backward_with(*(lambda dtype, name=name: getattr(built[1], f"{name}_{dtype}")
                                                  for name in names))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
@pytest.mark.parametrize("how", ["ahead_of_time", "jit"])
def test_gradients_are_the_references_bit_for_bit(built, how, use_mask, dtype):
    x, offset, mask, geometry = _arrays(dtype, use_mask)
    rng = np.random.default_rng(5)
    weight, bias = rng.standard_normal((4, 3, 3, 2)).astype(dtype), rng.standard_normal(4).astype(dtype)
    grad = rng.standard_normal((2, 4, 5, 9)).astype(dtype)[:, :, :, ::-1]  # not contiguous
    attrs = dict(ATTRS, use_mask=use_mask)
    expected = deform_conv2d_backward.generic(np, grad, x, weight, offset, mask, bias, **attrs)
    kernel = _backward_kernel(built, how)
    first = kernel(np, grad, x, weight, offset, mask, bias, **attrs)
    second = kernel(np, grad, x, weight, offset, mask, bias, **attrs)
    for want, got, again in zip(expected, first, second):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert _bits(got) == _bits(want) and _bits(again) == _bits(got)


@pytest.mark.parametrize("case", ["1x1", "empty_batch", "nan_and_huge_offsets"])
def test_gradients_at_the_edges_are_the_references(built, case):
    """A 1x1 kernel over a 1x1 output (the channel sum is then NumPy's innermost axis), an
    empty batch, and offsets that are NaN or far beyond any int."""
    rng = np.random.default_rng(6)
    n, channels, size = (0, 4, 3) if case == "empty_batch" else (3, 20, 1 if case == "1x1" else 4)
    x = rng.standard_normal((n, channels, size, size)).astype(np.float32)
    offset = (rng.standard_normal((n, 2, size, size)) * 2).astype(np.float32)
    if case == "nan_and_huge_offsets":
        offset[0, 0, 0, 0], offset[1, 1, 2, 3], offset[2, 0, 1, 1] = np.nan, 1e30, -3e38
    mask = rng.standard_normal((n, 1, size, size)).astype(np.float32)
    weight = rng.standard_normal((5, channels, 1, 1)).astype(np.float32)
    grad = rng.standard_normal((n, 5, size, size)).astype(np.float32)
    attrs = dict(stride_h=1, stride_w=1, pad_h=0, pad_w=0, dilation_h=1, dilation_w=1, groups=1, offset_groups=1,
                 use_mask=True)
    with np.errstate(invalid="ignore"):  # the reference's int64 cast of NaN and huge floors
        expected = deform_conv2d_backward.generic(np, grad, x, weight, offset, mask, None, **attrs)
    got = _backward_kernel(built, "ahead_of_time")(np, grad, x, weight, offset, mask, None, **attrs)
    assert [_bits(g) for g in got] == [_bits(e) for e in expected]


def test_the_build_records_its_source(built):
    assert built[1].source_digest() == deform_conv2d_build.source_digest()


@pytest.fixture
def installed(built, monkeypatch):
    """ember_vision._deform_conv2d_compiled importable (as an install puts it), the cpu
    kernel registered by the loader; the op's kernels as they were afterwards."""
    with installed_in(built[0], (deform_conv2d_op, deform_conv2d_backward), monkeypatch):
        yield


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_registered_kernel_gives_the_references_outputs(installed, dtype):
    x, offset, mask, _ = _arrays(dtype, True, seed=3)
    weight = np.random.default_rng(4).standard_normal((4, 3, 3, 2)).astype(dtype)
    tensors = [ember.tensor(a) for a in (x, offset, weight, mask)]
    kwargs = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    reference = deform_conv2d(tensors[0], tensors[1], tensors[2], mask=tensors[3], **kwargs).numpy()
    assert deform_conv2d_compiled.register()
    forget_kernels()
    assert deform_conv2d_op.kernel_for("cpu").__name__ == "compiled_deform_conv2d"
    out = deform_conv2d(tensors[0], tensors[1], tensors[2], mask=tensors[3], **kwargs).numpy()
    assert _bits(out) == _bits(reference)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_registered_backward_gives_the_references_gradients(installed, dtype):
    x, offset, mask, _ = _arrays(dtype, True, seed=7)
    weight = np.random.default_rng(8).standard_normal((4, 3, 3, 2)).astype(dtype)
    bias = np.random.default_rng(9).standard_normal(4).astype(dtype)

    def gradients():
        tensors = [ember.tensor(a, requires_grad=True) for a in (x, offset, weight, mask, bias)]
        out = deform_conv2d(tensors[0], tensors[1], tensors[2], tensors[4], stride=(2, 1), padding=(1, 2),
                            dilation=(1, 2), mask=tensors[3])
        (out * out).sum().backward()
        return [_bits(t.grad.numpy()) for t in tensors]

    reference = gradients()
    assert deform_conv2d_compiled.register()
    forget_kernels()
    assert deform_conv2d_backward.kernel_for("cpu").__name__ == "compiled_deform_conv2d_backward"
    assert gradients() == reference


def test_a_build_older_than_the_loops_is_not_used(installed, monkeypatch):
    monkeypatch.setattr(deform_conv2d_compiled, "source_digest", lambda: 12345)
    with pytest.warns(RuntimeWarning, match="built from another deform_conv2d_loops.py"):
        assert deform_conv2d_compiled.load() is None
    with pytest.warns(RuntimeWarning):
        assert not deform_conv2d_compiled.register()


def test_without_a_build_the_reference_serves(monkeypatch):
    monkeypatch.setattr(deform_conv2d_compiled, "MODULE", "ember_vision._not_built_here")
    assert deform_conv2d_compiled.load() is None and not deform_conv2d_compiled.register()
