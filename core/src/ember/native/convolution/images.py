"""NCHW im2col convolutions a few images at a time: the products of one image (or a
small chunk of them) where one product for the whole batch would need a transposing
copy or an intermediate too large for the cache.

PyTorch counterpart: aten/src/ATen/native/ConvolutionMM2d.cpp (v2.13), whose
``slow_conv2d`` forward and backward loop over the batch one image at a time (columns,
product and col2im per image); the fixed rule of ember/native/convolution/algorithm.py picks these kernels when
BLAS runs one thread (NOTE [ Loops of products only on one BLAS thread ] below).

# NOTE [ col2im a few images at a time ]
# The input adjoint's product writes kh*kw columns per input pixel, which col2im
# then adds back onto the image. For the whole batch at once that is a matrix 9x the
# image (38 MB for a 32->64 layer at 32x32, batch 32), written to memory and read back,
# and past the allocator's cache (NOTE [ Caching freed memory on the CPU ]) it is
# faulted in afresh every step. Over a few images at a time (one buffer reused), the
# columns are still in cache when col2im reads them. The sums are the same; BLAS may
# block a smaller product differently, so the last bits may differ.

# NOTE [ NCHW products one image at a time ]
# With the columns (K, N*L) of the whole batch, one product W (O, K) @ columns gives
# the output channel-major, (O, N*L), and NCHW wants (N, O, L): a transposing copy of
# the whole output (NOTE [ One product per group ] in convolution.py), after a column
# matrix 9x the input written to memory and read back. Here each chunk of images
# builds its columns into one buffer reused by every chunk (core's im2col stub, which
# ember-numba compiles: NOTE [ im2col and col2im as dispatch stubs ] in fold.py), so
# the product reads them from cache; a chunk of one image (a map of at least
# MIN_PIXELS outputs) writes W @ columns straight into output[n], a smaller one makes
# one product of the chunk and a transposing copy of that chunk only. The backward
# does the same per chunk: the weight's gradient sums grad's rows against the chunk's
# columns, built again (or the forward's, kept in blocks where they fit the budget of
# ember/native/convolution/columns.py), and the input's gradient is the product back
# to the chunk's columns and col2im onto its images, reading the gradient where it
# lies (no channel-major copy). Measured interleaved in one process against torch's
# oneDNN and the whole-batch path, CPU time, one thread, load 3-4, four runs:
# bench/conv_layer.py's 32->64 layer at 32x32, forward 1.15-1.36 of torch (whole
# batch: 1.97-2.10), training step 1.09-1.24 (1.32-1.53); bench/cnn_step.py 1.07-1.28
# (1.19-1.31; three runs). Kept columns paid on a 9 MB layer (stride 2, 24.4 ms
# against 25.6) and lost on conv_layer's 38 MB (1.40 of torch against 1.16), so a
# chunked forward keeps its columns only within the budget.

# NOTE [ The bias as one more row of the product ]
# Adding the bias after the product is one more pass over the whole output. Instead
# the weight matrix gains the bias as a last column and every chunk's columns a last
# row of ones, so the product adds it, while the output is being written: on
# conv_layer's forward 22.4 ms against 24.3 (median of 25, interleaved, CPU time).
# The bias then enters each output's sum inside the product, where torch adds it
# after; the two differ in the last bits only.
"""

from ember.native.convolution import columns as kept_columns
from ember.native.fold import COL2IM_ADD, IM2COL_INTO
from ember.native.support.dispatch_stub import kernel_of

CHUNK_ELEMENTS = 1 << 20  # floats of columns per chunk of images
MIN_PIXELS = 1024  # outputs per image from which NCHW products run one image at a time
# Outputs per image from which an NCHW convolution runs a few images at a time at all.
# Measured per product on ResNet-18's 3x3 layers (CPU time, one thread, load 3-4, ms,
# chunks against the whole batch): at 32x32 and 16x16 the chunks won every product
# (64 channels at 32x32: weight's gradient 53 against 79, input's 45 against 61,
# forward 43 against 65); at 8x8 and 4x4 they lost (weight's gradient 44 against 39
# and 52 against 39, the 4x4 input's gradient 50 against 41), their products of 64
# and 16 columns per image running below BLAS's speed.
MIN_CHUNK_PIXELS = 256


# NOTE [ Loops of products only on one BLAS thread ]
# A kernel may split one large product into a few smaller ones (a few images at a
# time) to keep its intermediate in cache. With one BLAS thread that only pays. With
# more, every product wakes BLAS's threads and waits for all of them: on the loaded
# 2-core machine the 32->64 input adjoint done 11 chunks at a time took 347 ms on two
# threads against 102 ms in one product (and 74 against 86 on one thread). So such
# loops run only where NumPy's BLAS has one thread, read through threadpoolctl (the
# pools are looked up once; reading the count costs about a microsecond). The count
# is read, never timed: the same threads give the same kernels in every process.
_BLAS_POOLS = []


def one_blas_thread():
    """Whether the BLAS pools NumPy's products run on have one thread each (NOTE [ Loops
    of products only on one BLAS thread ])."""
    if not _BLAS_POOLS:
        from threadpoolctl import ThreadpoolController

        _BLAS_POOLS.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    return all(pool.num_threads == 1 for pool in _BLAS_POOLS[0])


def images_per_chunk(N, floats_per_image):
    """Images per product so that a chunk holds about CHUNK_ELEMENTS floats; the whole
    batch unless BLAS runs one thread (a batch of one is one chunk either way: the pools
    are not asked)."""
    if N <= 1:
        return 1
    return max(1, CHUNK_ELEMENTS // max(1, floats_per_image)) if one_blas_thread() else N


def applies(xp, g, groups):
    """Whether an NCHW im2col convolution runs a few images at a time (NOTE [ NCHW
    products one image at a time ]): NumPy arrays (as measured; a GPU wants the whole
    batch's products), one group, MIN_CHUNK_PIXELS outputs per image, one BLAS thread."""
    return (xp.__name__ == "numpy" and groups == 1 and g.N > 0 and g.C > 0 and g.L >= MIN_CHUNK_PIXELS
            and one_blas_thread())


def images_per_product(g, K):
    """One image per product where an image has MIN_PIXELS outputs (its product is then
    written straight into NCHW), else a chunk of about CHUNK_ELEMENTS floats of
    ``(K, n*L)`` columns."""
    if g.L >= MIN_PIXELS:
        return 1
    return max(1, min(g.N, CHUNK_ELEMENTS // max(1, K * g.L)))


def chunks(xp, g, K, dtype, rows=None, store=None):
    """``(start, stop, columns)`` per chunk of images, ``columns`` a C-contiguous
    ``(rows, (stop-start)*L)`` block (``rows`` defaults to K): of one buffer reused by
    every chunk, or of ``store``, whose blocks follow one another. The channels_last
    kernels (channels_last_images.py) read each block as ``((stop-start)*L, K)`` rows."""
    rows = K if rows is None else rows
    per_chunk = images_per_product(g, K)
    buffer = xp.empty(rows * per_chunk * g.L, dtype=dtype) if store is None else None
    for start in range(0, g.N, per_chunk):
        stop = min(g.N, start + per_chunk)
        size = rows * (stop - start) * g.L
        first = 0 if store is None else rows * start * g.L
        block = (buffer if store is None else store)[first:first + size]
        yield start, stop, block.reshape(rows, (stop - start) * g.L)


def _rows(xp, grad, start, stop, L):
    """Images ``start:stop`` of an ``(N, O, OH, OW)`` gradient of any strides, as the
    ``(O, n*L)`` left side of their products."""
    O = grad.shape[1]
    if stop - start == 1:
        return grad[start].reshape(O, L)
    chunk = grad[start:stop].reshape(stop - start, O, L).transpose(1, 0, 2)
    return xp.ascontiguousarray(chunk).reshape(O, (stop - start) * L)


def forward(xp, x, weight, g, bias=None):
    """F(x, W) + bias of an NCHW ``x``, chunk by chunk: a C-contiguous ``(N, O, OH,
    OW)`` (NOTE [ The bias as one more row of the product ]); offers its columns to a
    capture when they fit (NOTE [ The forward's columns, kept for the weight's
    gradient ])."""
    im2col = kernel_of(IM2COL_INTO, xp)
    O, K = weight.shape[0], weight.shape[1] * g.kh * g.kw
    w = weight.reshape(O, K)
    if bias is not None:
        w = xp.concatenate([w, bias.reshape(O, 1).astype(w.dtype, copy=False)], axis=1)
    rows, store = w.shape[1], None
    if kept_columns.wanted(rows * g.N * g.L * x.dtype.itemsize):
        store = xp.empty(rows * g.N * g.L, dtype=x.dtype)
        kept_columns.offer(store, "images")
    y = xp.empty((g.N, O, g.OH, g.OW), dtype=x.dtype)
    outputs = y.reshape(g.N, O, g.L)
    for start, stop, columns in chunks(xp, g, K, x.dtype, rows, store):
        im2col(xp, x[start:stop], columns[:K], g)
        if bias is not None:
            columns[K] = 1
        if stop - start == 1:
            xp.matmul(w, columns, out=outputs[start])
        else:
            product = xp.matmul(w, columns).reshape(O, stop - start, g.L)
            outputs[start:stop] = product.transpose(1, 0, 2)
    return y


def weight_adjoint(xp, x, grad, weight_shape, g):
    """F(x, .)^T: the sum over chunks of grad's rows against the chunk's columns, the
    forward's where they were kept, else built again."""
    im2col = kernel_of(IM2COL_INTO, xp)
    K = weight_shape[1] * weight_shape[2] * weight_shape[3]
    for rows in (K, K + 1):  # a row of ones follows where the forward added a bias
        store = kept_columns.take("images", (rows * g.N * g.L,), x.dtype)
        if store is not None:
            break
    total = None
    for start, stop, columns in chunks(xp, g, K, x.dtype, rows, store):
        columns = columns[:K]
        if store is None:
            im2col(xp, x[start:stop], columns, g)
        part = xp.matmul(_rows(xp, grad, start, stop, g.L), columns.T)
        total = part if total is None else xp.add(total, part, out=total)
    return total.reshape(weight_shape)


def input_adjoint(xp, grad, weight, g):
    """F(., W)^T grad: per chunk, the product back to columns and col2im onto the
    chunk's images (NOTE [ col2im a few images at a time ])."""
    col2im = kernel_of(COL2IM_ADD, xp)
    O, K = weight.shape[0], weight.shape[1] * g.kh * g.kw
    w_t = xp.ascontiguousarray(weight.reshape(O, K).T)  # contiguous, for BLAS
    image = xp.zeros((g.N, g.C, g.H, g.W), dtype=grad.dtype)
    for start, stop, columns in chunks(xp, g, K, grad.dtype):
        xp.matmul(w_t, _rows(xp, grad, start, stop, g.L), out=columns)
        col2im(xp, columns, image[start:stop], g)
    return image
