"""deform_conv2d's CUDA kernels: the reference's forward with its sampling step
(``deformable_im2col``) run as one CUDA kernel compiled by CuPy (``cupy.RawKernel``), and
its backward with two (``deformable_col2im``, ``deformable_col2im_coord``), registered
for "cuda" when CuPy is installed.

PyTorch counterpart: torchvision/csrc/ops/cuda/deform_conv2d_kernel.cu
(``deformable_im2col_kernel``, one thread per (channel, image, output position),
``deformable_col2im_kernel``, ``deformable_col2im_coord_kernel``, and
``TORCH_LIBRARY_IMPL(torchvision, CUDA, m)``) (torchvision 0.28).

As the compiled cpu loop does (NOTE [ A compiled im2col with the reference's bits ] in
deform_conv2d_loops.py), the kernel repeats the reference's arithmetic per element; it
is compiled with ``--fmad=false``, so that no multiply and add fuse into one rounding,
and so gives the columns the generic kernel computes with CuPy bit for bit. The GEMM
(cuBLAS through ``cupy.matmul``) is the generic kernel's. The backward has two kernels
of its own (NOTE [ The CUDA backward ]) between the generic kernel's GEMMs. The tests
run them where a GPU is (tests/plugins/vision/test_deform_conv2d_cuda.py) and, compiled
as host C++, everywhere (test_deform_conv2d_cuda_source.py).
"""

import functools
import importlib.util

import numpy as np

from ember import library
from ember_vision.ops.deform_conv2d_kernel import (
    backward,
    base_positions,
    deform_conv2d,
    deform_conv2d_backward,
    deformable_im2col,
    forward,
)

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

# NOTE [ The CUDA backward ]
# Two kernels, as torchvision's: ``deformable_col2im``, one thread per (image, channel,
# tap, output position), adds the column gradient (already times the mask) times each
# corner's bilinear weight onto the input's gradient with atomicAdd, into a float64
# buffer as the reference's bincount adds (its order is the threads', so the sum may
# differ from the reference's in the last bit; the float64 buffer keeps that below one
# float32 rounding); ``deformable_col2im_coord``, one thread per (image, offset group,
# tap, output position), sums over the group's channels in order, with the arithmetic
# of the compiled loop (deform_conv2d_loops.deformable_col2im_coord), so the offsets' and
# the mask's gradients are the NumPy reference's bit for bit.
BACKWARD_SOURCE = r"""
extern "C" __global__ void deformable_col2im(
    const scalar_t* masked, const scalar_t* offset, const scalar_t* rows, const scalar_t* cols,
    double* total, long long n, long long channels, long long height, long long width,
    long long kh, long long kw, long long out_h, long long out_w, long long offset_groups) {
  const long long points = out_h * out_w, taps = kh * kw;
  const long long step = (long long)blockDim.x * gridDim.x;
  for (long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       index < n * channels * taps * points; index += step) {
    const long long p = index % points, oh = p / out_w, ow = p % out_w;
    const long long k = (index / points) % taps, i = k / kw, j = k % kw;
    const long long c = (index / (points * taps)) % channels, b = index / (points * taps * channels);
    const long long tap = c / (channels / offset_groups) * taps + k;
    const long long at = (b * offset_groups * taps + tap) * 2 * points + p;
    const scalar_t y = rows[i * out_h + oh] + offset[at];
    const scalar_t x = cols[j * out_w + ow] + offset[at + points];
    if (!(y > -1 && y < height && x > -1 && x < width)) continue;
    const scalar_t y_low = floor(y), x_low = floor(x);
    const scalar_t ly = y - y_low, lx = x - x_low, hy = 1 - ly, hx = 1 - lx;
    for (int corner = 0; corner < 4; ++corner) {
      const scalar_t cy = y_low + corner / 2, cx = x_low + corner % 2;
      if (!(cy >= 0 && cy < height && cx >= 0 && cx < width)) continue;
      const scalar_t wy = corner / 2 ? ly : hy, wx = corner % 2 ? lx : hx;
      const scalar_t value = wy * wx * masked[index];
      atomicAdd(total + ((b * channels + c) * height + (long long)cy) * width + (long long)cx, (double)value);
    }
  }
}

extern "C" __global__ void deformable_col2im_coord(
    const scalar_t* grad_columns, const scalar_t* masked, const scalar_t* input, const scalar_t* offset,
    const scalar_t* rows, const scalar_t* cols, scalar_t* grad_offset, scalar_t* grad_mask,
    long long n, long long channels, long long height, long long width,
    long long kh, long long kw, long long out_h, long long out_w, long long offset_groups, int use_mask) {
  const long long points = out_h * out_w, taps = kh * kw, per_group = channels / offset_groups;
  const long long step = (long long)blockDim.x * gridDim.x;
  for (long long index = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       index < n * offset_groups * taps * points; index += step) {
    const long long p = index % points, oh = p / out_w, ow = p % out_w;
    const long long k = (index / points) % taps, i = k / kw, j = k % kw;
    const long long g = (index / (points * taps)) % offset_groups, b = index / (points * taps * offset_groups);
    const long long tap = g * taps + k;
    const long long at = (b * offset_groups * taps + tap) * 2 * points + p;
    const scalar_t y = rows[i * out_h + oh] + offset[at];
    const scalar_t x = cols[j * out_w + ow] + offset[at + points];
    const bool sampled = y > -1 && y < height && x > -1 && x < width;
    const scalar_t y_low = floor(y), x_low = floor(x);
    const scalar_t ly = y - y_low, lx = x - x_low, hy = 1 - ly, hx = 1 - lx;
    const bool top = y_low >= 0 && y_low < height, bottom = y_low + 1 >= 0 && y_low + 1 < height;
    const bool left = x_low >= 0 && x_low < width, right = x_low + 1 >= 0 && x_low + 1 < width;
    scalar_t along_y_sum = 0, along_x_sum = 0, mask_sum = 0;
    for (long long c = g * per_group; c < (g + 1) * per_group; ++c) {
      const scalar_t* image = input + (b * channels + c) * height * width;
      const long long y0 = top || bottom ? (long long)y_low : 0, x0 = left || right ? (long long)x_low : 0;
      const scalar_t v1 = (top && left) ? image[y0 * width + x0] : 0;
      const scalar_t v2 = (top && right) ? image[y0 * width + x0 + 1] : 0;
      const scalar_t v3 = (bottom && left) ? image[(y0 + 1) * width + x0] : 0;
      const scalar_t v4 = (bottom && right) ? image[(y0 + 1) * width + x0 + 1] : 0;
      const long long column = ((b * channels + c) * taps + k) * points + p;
      along_y_sum += masked[column] * (lx * (v4 - v2) + hx * (v3 - v1));
      along_x_sum += masked[column] * (ly * (v4 - v3) + hy * (v2 - v1));
      if (use_mask) {
        const scalar_t sample = sampled ? hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4 : 0;
        mask_sum += grad_columns[column] * sample;
      }
    }
    grad_offset[((b * offset_groups * taps + tap) * 2) * points + p] = along_y_sum;
    grad_offset[((b * offset_groups * taps + tap) * 2 + 1) * points + p] = along_x_sum;
    grad_mask[(b * offset_groups * taps + tap) * points + p] = mask_sum;
  }
}
"""

C_TYPES = {"float32": "float", "float64": "double"}


@functools.cache  # one compiled kernel per dtype (CuPy caches the binary on disk too)
def compiled(dtype_name, name="deformable_im2col"):
    """The RawKernel ``name`` for float32 or float64 (``scalar_t`` spelled out: RawKernel
    takes no templates)."""
    import cupy

    source = "typedef " + C_TYPES[dtype_name] + " scalar_t;\n" + (SOURCE if name == "deformable_im2col"
                                                                    else BACKWARD_SOURCE)
    return cupy.RawKernel(source, name, options=("--fmad=false",))


def _launch(xp, name, total, arrays, sizes):
    """Run the kernel ``name`` over ``total`` indices (grid-stride, as the forward's)."""
    if total == 0:
        return
    blocks = min((total + THREADS - 1) // THREADS, 65535)
    compiled(arrays[0].dtype.name, name)((blocks,), (THREADS,), (*arrays, *sizes))


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


def cuda_col2im(xp, masked, offset, rows, cols, input_shape, g):
    """The input's gradient from the ``deformable_col2im`` kernel (NOTE [ The CUDA backward ])."""
    n, channels, height, width = input_shape
    total = xp.zeros(n * channels * height * width, dtype=xp.float64)
    sizes = [np.int64(s) for s in (n, channels, height, width, g.kh, g.kw, g.out_h, g.out_w, g.offset_groups)]
    _launch(xp, "deformable_col2im", masked.size, (masked, offset, rows, cols, total), sizes)
    return total.astype(masked.dtype).reshape(input_shape)


def cuda_col2im_coord(xp, grad_columns, masked, input, offset, rows, cols, g):
    """The offsets' and the mask's gradients from the ``deformable_col2im_coord`` kernel."""
    n, channels, height, width = input.shape
    taps, points = g.kh * g.kw, g.out_h * g.out_w
    grad_offset = xp.zeros((n, g.offset_groups * taps, 2, points), dtype=input.dtype)
    grad_mask = xp.zeros((n, g.offset_groups * taps, points), dtype=input.dtype)
    sizes = [np.int64(s) for s in (n, channels, height, width, g.kh, g.kw, g.out_h, g.out_w, g.offset_groups)]
    _launch(xp, "deformable_col2im_coord", n * g.offset_groups * taps * points,
            (grad_columns, masked, input, offset, rows, cols, grad_offset, grad_mask), sizes + [np.int32(g.use_mask)])
    return grad_offset, grad_mask


def cuda_deform_conv2d_backward(xp, grad, input, weight, offset, mask, bias, **attrs):
    """The cuda kernel of ``torchvision::_deform_conv2d_backward``: the reference's GEMMs
    around the two backward kernels and ``cuda_im2col``; other dtypes go to the
    reference."""
    if input.dtype.name not in C_TYPES:
        return deform_conv2d_backward.generic(xp, grad, input, weight, offset, mask, bias, **attrs)
    return backward(xp, grad, input, weight, offset, mask, bias, attrs, cuda_im2col, cuda_col2im, cuda_col2im_coord)


def register():
    """Register the kernels for "cuda" where CuPy is installed (it is imported at the
    first call only); returns whether they were."""
    if importlib.util.find_spec("cupy") is None:
        return False
    library.register_kernel(deform_conv2d, "cuda", cuda_deform_conv2d)
    library.register_kernel(deform_conv2d_backward, "cuda", cuda_deform_conv2d_backward)
    return True
