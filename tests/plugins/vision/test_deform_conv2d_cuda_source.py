"""The CUDA kernels' source, checked on a machine without a GPU: compiled as host C++
(one "thread" walking every index, the CUDA built-ins stubbed, atomicAdd a plain add, no
fused multiply-add, as ``--fmad=false`` asks of nvrtc), the forward's kernel must give
the NumPy reference's columns bit for bit, and the backward's the reference's offset and
mask gradients bit for bit and its input gradient to one rounding (its adds come in
another order, NOTE [ The CUDA backward ]). This checks their indexing and
arithmetic; test_deform_conv2d_cuda.py runs the real kernels where a GPU is.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d_cuda.py (PyTorch counterpart:
torchvision/csrc/ops/cuda/deform_conv2d_kernel.cu, torchvision 0.28).
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from ember_vision.ops.deform_conv2d_cuda import BACKWARD_SOURCE, C_TYPES, SOURCE
from ember_vision.ops.deform_conv2d_kernel import (
    backward,
    base_positions,
    check_arguments,
    deform_conv2d_backward,
    deformable_im2col,
)

HOST = """#include <cmath>
using std::floor;
struct Index { long long x; };
static const Index blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
#define __global__
static void atomicAdd(double* address, double value) { *address += value; }
typedef %s scalar_t;
"""


@pytest.fixture(scope="module")
def host_libraries(tmp_path_factory):
    """``{dtype name: the forward's and backward's kernels compiled as one host library}``."""
    compiler = shutil.which("c++") or shutil.which("g++")
    assert compiler, "a C++ compiler (numba's ahead-of-time build needs one too)"
    folder = tmp_path_factory.mktemp("cuda_source")
    libraries = {}
    for name, c_type in C_TYPES.items():
        source, library = folder / f"{name}.cpp", folder / f"{name}.so"
        source.write_text(HOST % c_type + SOURCE + BACKWARD_SOURCE)
        subprocess.run([compiler, "-O1", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(library), str(source)],
                       check=True)
        libraries[name] = ctypes.CDLL(str(library))
    return libraries


@pytest.fixture(scope="module")
def host_kernels(host_libraries):
    """``{dtype name: the forward's kernel compiled as a host function}``."""
    return {name: library.deformable_im2col for name, library in host_libraries.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_the_kernel_source_gives_the_references_columns(host_kernels, use_mask, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 9, 7)).astype(dtype)
    offset = (rng.standard_normal((2, 36, 5, 9)) * 4).astype(dtype)
    mask = rng.standard_normal((2, 18, 5, 9)).astype(dtype)
    g = check_arguments(x, np.zeros((4, 3, 3, 2)), offset, mask, stride_h=2, stride_w=1, pad_h=1, pad_w=2,
                        dilation_h=1, dilation_w=2, groups=2, offset_groups=3, use_mask=use_mask)
    rows, cols = base_positions(np, g, x.dtype)
    columns = np.empty((2, 6 * 3 * 2, 5 * 9), dtype)
    pointers = [a.ctypes.data_as(ctypes.c_void_p) for a in (x, offset, mask, rows, cols, columns)]
    sizes = [ctypes.c_longlong(s) for s in (2, 6, 9, 7, 3, 2, g.out_h, g.out_w, 3)]
    host_kernels[dtype](*pointers, *sizes, ctypes.c_int(use_mask))
    expected = deformable_im2col(np, x, offset, mask, g)
    assert columns.tobytes() == expected.tobytes()


def _pointers(*arrays):
    return [a.ctypes.data_as(ctypes.c_void_p) for a in arrays]


def _host_backward(library):
    """The backward's ``col2im`` and ``col2im_coord`` steps (as ``backward`` takes them) run
    by the host-compiled kernels, and the forward's ``im2col``."""
    def sizes(shape, g):
        return [ctypes.c_longlong(s) for s in (*shape, g.kh, g.kw, g.out_h, g.out_w, g.offset_groups)]

    def im2col(xp, input, offset, mask, g):
        columns = np.empty((input.shape[0], input.shape[1] * g.kh * g.kw, g.out_h * g.out_w), input.dtype)
        rows, cols = base_positions(np, g, input.dtype)
        mask = np.ascontiguousarray(mask) if g.use_mask else np.zeros(1, input.dtype)
        library.deformable_im2col(*_pointers(input, offset, mask, rows, cols, columns), *sizes(input.shape, g),
                                  ctypes.c_int(g.use_mask))
        return columns

    def col2im(xp, masked, offset, rows, cols, input_shape, g):
        total = np.zeros(int(np.prod(input_shape)))
        library.deformable_col2im(*_pointers(masked, offset, rows, cols, total), *sizes(input_shape, g))
        return total.astype(masked.dtype).reshape(input_shape)

    def col2im_coord(xp, grad_columns, masked, input, offset, rows, cols, g):
        taps, points = g.kh * g.kw, g.out_h * g.out_w
        grad_offset = np.zeros((input.shape[0], g.offset_groups * taps, 2, points), input.dtype)
        grad_mask = np.zeros((input.shape[0], g.offset_groups * taps, points), input.dtype)
        library.deformable_col2im_coord(*_pointers(grad_columns, masked, input, offset, rows, cols, grad_offset,
                                                   grad_mask), *sizes(input.shape, g), ctypes.c_int(g.use_mask))
        return grad_offset, grad_mask
    return im2col, col2im, col2im_coord


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_mask", [False, True], ids=["dcn", "mask"])
def test_the_backward_kernels_source_gives_the_references_gradients(host_libraries, use_mask, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 9, 7)).astype(dtype)
    offset = (rng.standard_normal((2, 36, 5, 9)) * 4).astype(dtype)
    offset[0, 0, 0, 0], offset[1, 3, 2, 2] = np.nan, 1e30  # never sampled, and never cast to an int
    mask = rng.standard_normal((2, 18, 5, 9)).astype(dtype)
    weight = rng.standard_normal((4, 3, 3, 2)).astype(dtype)
    bias = rng.standard_normal(4).astype(dtype)
    grad = rng.standard_normal((2, 4, 5, 9)).astype(dtype)
    attrs = dict(stride_h=2, stride_w=1, pad_h=1, pad_w=2, dilation_h=1, dilation_w=2, groups=2, offset_groups=3,
                 use_mask=use_mask)
    with np.errstate(invalid="ignore"):  # the reference's int64 cast of NaN and huge floors
        expected = deform_conv2d_backward.generic(np, grad, x, weight, offset, mask, bias, **attrs)
    got = backward(np, grad, x, weight, offset, mask, bias, attrs, *_host_backward(host_libraries[dtype]))
    grad_input, *others = got
    for want, have in zip(expected[1:], others):
        assert have.dtype == want.dtype and have.tobytes() == want.tobytes()
    assert np.abs(grad_input).sum() > 0
    if dtype == "float32":  # float64 sums of float32 products, in another order, rounded once
        np.testing.assert_array_max_ulp(grad_input, expected[0], maxulp=1)
    else:  # float64 sums in another order: float64 roundings apart
        np.testing.assert_allclose(grad_input, expected[0], rtol=1e-13, atol=1e-13)
