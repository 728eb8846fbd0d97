"""The CUDA kernel's source, checked on a machine without a GPU: compiled as host C++
(one "thread" walking every index, the CUDA built-ins stubbed, no fused multiply-add,
as ``--fmad=false`` asks of nvrtc), it must give the NumPy reference's columns bit for
bit. This checks its indexing and arithmetic; test_deform_conv2d_cuda.py runs the real
kernel where a GPU is.

Tests for plugins/vision/src/ember_vision/ops/deform_conv2d_cuda.py (PyTorch counterpart:
torchvision/csrc/ops/cuda/deform_conv2d_kernel.cu, torchvision 0.28).
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from ember_vision.ops.deform_conv2d_cuda import C_TYPES, SOURCE
from ember_vision.ops.deform_conv2d_kernel import base_positions, check_arguments, deformable_im2col

HOST = """#include <cmath>
using std::floor;
struct Index { long long x; };
static const Index blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
#define __global__
typedef %s scalar_t;
"""


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """``{dtype name: the kernel compiled as a host function}``."""
    compiler = shutil.which("c++") or shutil.which("g++")
    assert compiler, "a C++ compiler (numba's ahead-of-time build needs one too)"
    folder = tmp_path_factory.mktemp("cuda_source")
    kernels = {}
    for name, c_type in C_TYPES.items():
        source, library = folder / f"{name}.cpp", folder / f"{name}.so"
        source.write_text(HOST % c_type + SOURCE)
        subprocess.run([compiler, "-O1", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(library), str(source)],
                       check=True)
        kernels[name] = ctypes.CDLL(str(library)).deformable_im2col
    return kernels


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
