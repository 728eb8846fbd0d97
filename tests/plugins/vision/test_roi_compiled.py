"""roi_align's and roi_pool's compiled cpu backward: the scatter loops, built ahead of time
as ember-vision's setup.py builds them (and through numba's JIT), give the NumPy
references' input gradients bit for bit (adaptive and fixed sampling, aligned or not,
boxes reaching outside the image, empty bins, ties for the maximum, no rois); the loader
registers them only when the build is there and was made from today's loops.

Tests for plugins/vision/src/ember_vision/ops/roi_loops.py and roi_compiled.py (PyTorch
counterpart: torchvision/csrc/ops/cpu/roi_align_kernel.cpp and roi_pool_kernel.cpp,
torchvision 0.28).
"""

import sys

import numpy as np
import pytest
from aot_build import built_extension, installed_in
from vision_reference import random_rois

import ember
import ember_vision
from ember.dispatcher import forget_kernels
from ember_vision.ops import deform_conv2d_build, roi_compiled, roi_loops

ALIGN = sys.modules["ember_vision.ops.roi_align"]  # the package's `roi_align` is the function
POOL = sys.modules["ember_vision.ops.roi_pool"]
SHAPE = dict(batch_size=2, channels=3, height=11, width=13)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The extension module as setup.py builds it, in a folder of its own, and loaded."""
    return built_extension(tmp_path_factory.mktemp("build"), "_roi_compiled", roi_loops)


JITTED = {"roi_align_spread": roi_loops.jitted_align, "roi_pool_spread": roi_loops.jitted_pool}


def _loop(built, how, name):
    if how == "jit":
        return lambda dtype: JITTED[name]
    return lambda dtype: getattr(built[1], f"{name}_{dtype}")


def _rois(dtype, count=9, seed=0):
    rng = np.random.default_rng(seed)
    return random_rois(rng, count, 2, 11 / 0.7, 13 / 0.7).astype(dtype)


def _bits(array):
    return np.ascontiguousarray(array).view(np.uint8).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sampling_ratio, aligned", [(-1, False), (2, True), (0, True), (3, False)])
@pytest.mark.parametrize("how", ["ahead_of_time", "jit"])
def test_roi_align_gradients_are_the_references_bit_for_bit(built, how, sampling_ratio, aligned, dtype):
    rois = _rois(dtype)
    rois[0, 1:] = [-9.0, -9.0, 30.0, 25.0]  # reaching outside the image on every side
    grad = np.random.default_rng(1).standard_normal((len(rois), 3, 5, 4)).astype(dtype)[:, :, ::-1]
    attrs = dict(spatial_scale=0.7, pooled_height=5, pooled_width=4, sampling_ratio=sampling_ratio, aligned=aligned)
    expected = ALIGN.roi_align_backward_op.generic(np, grad, rois, **attrs, **SHAPE)
    kernel = roi_compiled.align_backward_with(_loop(built, how, "roi_align_spread"))
    got = kernel(np, grad, rois, **attrs, **SHAPE)
    assert got.dtype == dtype and got.shape == expected.shape and np.abs(got).sum() > 0
    assert _bits(got) == _bits(expected) and _bits(kernel(np, grad, rois, **attrs, **SHAPE)) == _bits(got)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("how", ["ahead_of_time", "jit"])
def test_roi_pool_gradients_are_the_references_bit_for_bit(built, how, dtype):
    rng = np.random.default_rng(2)
    x = rng.integers(-2, 3, (2, 3, 11, 13)).astype(dtype)  # small integers: ties for the maximum
    rois = _rois(dtype, seed=3)
    rois[1, 1:] = [40.0, 40.0, 50.0, 50.0]  # outside the image: empty bins, argmax -1
    attrs = dict(spatial_scale=0.7, pooled_height=3, pooled_width=4)
    _, argmax = POOL.roi_pool_op.generic(np, x, rois, **attrs)
    grad = rng.standard_normal((len(rois), 3, 3, 4)).astype(dtype)
    expected = POOL.roi_pool_backward_op.generic(np, grad, rois, argmax, **attrs, **SHAPE)
    got = roi_compiled.pool_backward_with(_loop(built, how, "roi_pool_spread"))(np, grad, rois, argmax, **attrs,
                                                                                   **SHAPE)
    assert got.dtype == dtype and (argmax == -1).any() and np.abs(got).sum() > 0
    assert _bits(got) == _bits(expected)


def test_no_rois(built):
    empty = np.zeros((0, 5))
    align = roi_compiled.align_backward_with(_loop(built, "ahead_of_time", "roi_align_spread"))
    got = align(np, np.zeros((0, 3, 2, 2)), empty, spatial_scale=1.0, pooled_height=2, pooled_width=2,
                sampling_ratio=-1, aligned=False, **SHAPE)
    pool = roi_compiled.pool_backward_with(_loop(built, "ahead_of_time", "roi_pool_spread"))
    got_pool = pool(np, np.zeros((0, 3, 2, 2)), empty, np.zeros((0, 3, 2, 2), np.int32), spatial_scale=1.0,
                    pooled_height=2, pooled_width=2, **SHAPE)
    for array in (got, got_pool):
        assert array.shape == (2, 3, 11, 13) and not array.any()


def test_a_gradient_of_another_dtype_than_the_rois_is_refused(built):
    kernel = roi_compiled.align_backward_with(_loop(built, "ahead_of_time", "roi_align_spread"))
    with pytest.raises(RuntimeError, match="grad should have the same type as rois"):
        kernel(np, np.zeros((1, 3, 2, 2), np.float32), np.zeros((1, 5)), spatial_scale=1.0, pooled_height=2,
               pooled_width=2, sampling_ratio=-1, aligned=False, **SHAPE)


def test_the_build_records_its_source(built):
    assert built[1].source_digest() == deform_conv2d_build.source_digest(roi_compiled.LOOPS)


@pytest.fixture
def installed(built, monkeypatch):
    """ember_vision._roi_compiled importable (as an install puts it); the ops' kernels as
    they were afterwards."""
    with installed_in(built[0], (ALIGN.roi_align_backward_op, POOL.roi_pool_backward_op), monkeypatch):
        yield


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_registered_kernels_give_the_references_gradients(installed, dtype):
    x = np.random.default_rng(4).standard_normal((2, 3, 11, 13)).astype(dtype)
    rois = _rois(dtype, seed=5)

    def gradients():
        grads = []
        for function in (ember_vision.ops.roi_align, ember_vision.ops.roi_pool):
            tensor = ember.tensor(x, requires_grad=True)
            out = function(tensor, ember.tensor(rois), (3, 2), 0.7)
            (out * out).sum().backward()
            grads.append(_bits(tensor.grad.numpy()))
        return grads

    reference = gradients()
    assert roi_compiled.register()
    forget_kernels()
    assert ALIGN.roi_align_backward_op.kernel_for("cpu").__name__ == "compiled_roi_align_backward"
    assert POOL.roi_pool_backward_op.kernel_for("cpu").__name__ == "compiled_roi_pool_backward"
    assert gradients() == reference


def test_a_build_older_than_the_loops_is_not_used(installed, monkeypatch):
    monkeypatch.setattr(roi_compiled, "source_digest", lambda path: 12345)
    with pytest.warns(RuntimeWarning, match="built from another roi_loops.py"):
        assert roi_compiled.load() is None


def test_without_a_build_the_reference_serves(monkeypatch):
    monkeypatch.setattr(roi_compiled, "MODULE", "ember_vision._not_built_here")
    assert roi_compiled.load() is None and not roi_compiled.register()
