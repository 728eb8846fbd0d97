"""NCHW im2col convolutions a few images at a time: the products of one image (or a
small chunk of them) where one product for the whole batch would need a transposing
copy or an intermediate too large for the cache.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (v2.13), whose
``slow_conv2d`` forward and backward loop over the batch one image at a time (columns,
product and col2im per image); ember/native/convolution.py calls these kernels when
BLAS runs one thread (NOTE [ Loops of products only on one BLAS thread ] in
ember/native/convolution_algorithm.py).

# NOTE [ col2im a few images at a time ]
# The input adjoint's product writes kh*kw columns per input pixel, which col2im
# then adds back onto the image. For the whole batch at once that is a matrix 9x the
# image (38 MB for a 32->64 layer at 32x32, batch 32), written to memory and read back,
# and past the allocator's cache (NOTE [ Caching freed memory on the CPU ]) it is
# faulted in afresh every step. Over a few images at a time (CHUNK_ELEMENTS floats of
# columns, one buffer reused), the columns are still in cache when col2im reads them:
# interleaved, one thread, 35.0 ms against 40.2 on that layer's input adjoint, and
# 0.88-0.95 of the conv_layer step. The sums are the same; BLAS may block a smaller
# product differently, so the last bits may differ.

# NOTE [ NCHW products one image at a time ]
# With the columns (K, N*L) of the whole batch, one product W (O, K) @ columns gives
# the output channel-major, (O, N*L), and NCHW wants (N, O, L): a transposing copy of
# the whole output (NOTE [ One product per group ] in convolution.py). One product per
# image, W @ columns[:, n*L:(n+1)*L] written into output[n], gives NCHW directly; the
# weight's gradient sums grad[n] @ columns[:, n*L:(n+1)*L]^T over the images, reading
# the gradient where it lies. Measured in CPU time, one thread, batch 32: the forward
# took 0.93 of the whole-batch product with its copy for 32->64 at 32x32, 0.94 for
# 64->64 at 32x32 and 0.60 for the 3-channel stem (4.4 ms against 2.6, its K = 27
# product being cheap beside the copy); at 16x16 it was even (1.03) and at 8x8 it
# lost (1.18: products of 64 columns run far below BLAS's speed). So the split runs
# where an image has at least MIN_PIXELS outputs. In whole steps (interleaved A/B, CPU
# time, load 3-4) the split paid on cnn_step, whose stem it serves (0.91-1.00 of the
# step over four runs), and was even on conv_layer (K = 288: 0.97-1.06), so it runs
# only for columns of at most MAX_COLUMN_ROWS rows, a stem's few input channels. The
# input adjoint split by image (W^T @ grad[n]) lost (1.03 of conv_layer): it keeps a
# few images per product, channel-major.
"""

from ember.native.convolution_algorithm import one_blas_thread

CHUNK_ELEMENTS = 1 << 20  # floats of columns per chunk of images
MIN_PIXELS = 1024  # outputs per image from which NCHW products run one image at a time
MAX_COLUMN_ROWS = 64  # ... and columns of at most this many rows (C*kh*kw): a stem's


def images_per_chunk(N, floats_per_image):
    """Images per product so that a chunk holds about CHUNK_ELEMENTS floats; the whole
    batch unless BLAS runs one thread."""
    return max(1, CHUNK_ELEMENTS // max(1, floats_per_image)) if one_blas_thread() else max(N, 1)


def applies(g, groups):
    """Whether an NCHW im2col convolution runs one image at a time (NOTE [ NCHW products
    one image at a time ])."""
    return (groups == 1 and g.N > 0 and g.L >= MIN_PIXELS and g.C * g.kh * g.kw <= MAX_COLUMN_ROWS
            and one_blas_thread())


def forward(xp, columns, weight, g):
    """F(x, W) from the batch's ``(1, K, N*L)`` columns: a C-contiguous ``(N, O, OH, OW)``."""
    O, L = weight.shape[0], g.L
    y = xp.empty((g.N, O, g.OH, g.OW), dtype=columns.dtype)
    per_image, w, cols = y.reshape(g.N, O, L), weight.reshape(O, -1), columns[0]
    for n in range(g.N):
        xp.matmul(w, cols[:, n * L:(n + 1) * L], out=per_image[n])
    return y


def weight_adjoint(xp, rows, columns, weight_shape, g):
    """F(x, .)^T: the sum over images of grad[n] @ columns[:, n*L:(n+1)*L]^T, with
    ``rows.image(n, L)`` giving image n's ``(O, L)`` gradient and ``columns`` the
    ``(1, K, N*L)`` columns."""
    L = g.L
    cols = columns[0]
    total = xp.matmul(rows.image(0, L), cols[:, :L].T)
    for n in range(1, g.N):
        total += xp.matmul(rows.image(n, L), cols[:, n * L:(n + 1) * L].T)
    return total.reshape(weight_shape)
