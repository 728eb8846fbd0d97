"""deform_conv2d's CUDA kernel: the reference's forward with its sampling step
(``deformable_im2col``) run as one CUDA kernel compiled by CuPy (``cupy.RawKernel``),
registered for "cuda" when CuPy is installed.

PyTorch counterpart: torchvision/csrc/ops/cuda/deform_conv2d_kernel.cu
(``deformable_im2col_kernel``, one thread per (channel, image, output position), and
``TORCH_LIBRARY_IMPL(torchvision, CUDA, m)``) (torchvision 0.28).

As the compiled cpu loop does (NOTE [ A compiled im2col with the reference's bits ] in
deform_conv2d_loops.py), the kernel repeats the reference's arithmetic per element; it
is compiled with ``--fmad=false``, so that no multiply and add fuse into one rounding,
and so gives the columns the generic kernel computes with CuPy bit for bit. The GEMM
(cuBLAS through ``cupy.matmul``) and the backward are the generic kernel's. The tests
run it where a GPU is (tests/plugins/vision/test_deform_conv2d_cuda.py).
"""

import functools
import importlib.util

import numpy as np

from ember import library
from ember_vision.ops.deform_conv2d_kernel import base_positions, deform_conv2d, deformable_im2col, forward

THREADS = 256

SOURCE = r"""
extern "C" __global__ void deformable_im2col(
    const scalar_t* input, const scalar_t* offset, const scalar_t* mask,
    const scalar_t* rows, const scalar_t* cols, scalar_t* columns,
    long long n, long long channels, long long height, long long width,
    long long kh, long long kw, long long out_h, long long out_w,
    long long offset_groups, int use_mask) {
  const long long points = out_h * out_w, taps = kh * kw;
  const long long step = (long long)blockDim.x * gridDim.x;
  for (long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       index < n * channels * points; index += step) {
    const long long p = index % points, oh = p / out_w, ow = p % out_w;
    const long long c = (index / points) % channels, b = index / (points * channels);
    const scalar_t* image = input + (b * channels + c) * height * width;
    for (long long k = 0; k < taps; ++k) {
      const long long i = k / kw, j = k % kw;
      const long long tap = c / (channels / offset_groups) * taps + k;
      const long long at = (b * offset_groups * taps + tap) * points + p;
      const scalar_t y = rows[i * out_h + oh] + offset[(2 * at - p)];
      const scalar_t x = cols[j * out_w + ow] + offset[(2 * at - p) + points];
      scalar_t value = 0;
      if (y > -1 && y < height && x > -1 && x < width) {
        const scalar_t y_low = floor(y), x_low = floor(x);
        const scalar_t ly = y - y_low, lx = x - x_low, hy = 1 - ly, hx = 1 - lx;
        const long long y0 = (long long)y_low, x0 = (long long)x_low;
        const bool top = y0 >= 0, bottom = y0 + 1 < height;
        const bool left = x0 >= 0, right = x0 + 1 < width;
        const scalar_t* at_low = image + y0 * width + x0;
        const scalar_t v1 = (top && left) ? at_low[0] : 0;
        const scalar_t v2 = (top && right) ? at_low[1] : 0;
        const scalar_t v3 = (bottom && left) ? at_low[width] : 0;
        const scalar_t v4 = (bottom && right) ? at_low[width + 1] : 0;
        value = hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
      }
      if (use_mask) value = mask[at] * value;
      columns[((b * channels + c) * taps + k) * points + p] = value;
    }
  }
}
"""

C_TYPES = {"float32": "float", "float64": "double"}


@functools.cache  # one compiled kernel per dtype (CuPy caches the binary on disk too)
def compiled(dtype_name):
    """The RawKernel for float32 or float64 (``scalar_t`` spelled out: RawKernel takes no templates)."""
    import cupy

    source = "typedef " + C_TYPES[dtype_name] + " scalar_t;\n" + SOURCE
    return cupy.RawKernel(source, "deformable_im2col", options=("--fmad=false",))


def cuda_im2col(xp, input, offset, mask, geometry):
    """The columns, as ``deformable_im2col`` gives them, from the CUDA kernel; other
    dtypes go to the reference."""
    if input.dtype.name not in C_TYPES:
        return deformable_im2col(xp, input, offset, mask, geometry)
    g = geometry
    n, channels, height, width = input.shape
    columns = xp.empty((n, channels * g.kh * g.kw, g.out_h * g.out_w), dtype=input.dtype)
    total = n * channels * g.out_h * g.out_w
    if total == 0:
        return columns
    rows, cols = base_positions(xp, g, input.dtype)
    mask = xp.ascontiguousarray(mask) if g.use_mask else xp.zeros(1, dtype=input.dtype)
    sizes = [np.int64(s) for s in (n, channels, height, width, g.kh, g.kw, g.out_h, g.out_w, g.offset_groups)]
    blocks = min((total + THREADS - 1) // THREADS, 65535)
    compiled(input.dtype.name)((blocks,), (THREADS,), (xp.ascontiguousarray(input), xp.ascontiguousarray(offset),
                                                        mask, rows, cols, columns, *sizes, np.int32(g.use_mask)))
    return columns


def cuda_deform_conv2d(xp, input, weight, offset, mask, bias, **attrs):
    """The cuda kernel of ``torchvision::deform_conv2d``: the reference's forward with
    ``cuda_im2col``."""
    return forward(xp, input, weight, offset, mask, bias, attrs, cuda_im2col)


def register():
    """Register the kernel for "cuda" where CuPy is installed (it is imported at the
    first call only); returns whether it was."""
    if importlib.util.find_spec("cupy") is None:
        return False
    library.register_kernel(deform_conv2d, "cuda", cuda_deform_conv2d)
    return True
